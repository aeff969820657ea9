import { Server, type Tool } from '@modelcontextprotocol/server';

/**
 * Low-level upstreams that exercise discovery's R6 guards: tools/list over
 * several cursor pages, a cursor cycle, and one oversized tool.
 */
function toolNamed(name: string, description = `Sample paged tool ${name}.`): Tool {
  return { name, description, inputSchema: { type: 'object', properties: { value: { type: 'string' } } }, annotations: { readOnlyHint: true } };
}

function serverWith(name: string, list: (cursor: string | undefined) => { tools: Tool[]; nextCursor?: string }): Server {
  const server = new Server({ name, version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', async (req) => list(req.params?.cursor));
  server.setRequestHandler('tools/call', async (req) => ({ content: [{ type: 'text', text: `${req.params.name} ran` }] }));
  return server;
}

/** 25 tools in pages of 10: cursors "page-2", "page-3". */
export function createPagedToolsServer(): Server {
  const all = Array.from({ length: 25 }, (_, i) => toolNamed(`paged_tool_${String(i + 1).padStart(2, '0')}`));
  return serverWith('paged-tools', (cursor) => {
    const page = cursor ? Number(cursor.replace('page-', '')) : 1;
    const tools = all.slice((page - 1) * 10, page * 10);
    return page * 10 < all.length ? { tools, nextCursor: `page-${page + 1}` } : { tools };
  });
}

/** Page 1 → cursor "a", page "a" → cursor "b", page "b" → cursor "a" again: a cycle. */
export function createCycleToolsServer(): Server {
  return serverWith('cycle-tools', (cursor) => {
    if (!cursor) return { tools: [toolNamed('cycle_tool_1')], nextCursor: 'a' };
    if (cursor === 'a') return { tools: [toolNamed('cycle_tool_2')], nextCursor: 'b' };
    return { tools: [toolNamed('cycle_tool_3')], nextCursor: 'a' };
  });
}

/** Two ordinary tools and one whose metadata is over 64,000 bytes. */
export function createOversizedToolsServer(): Server {
  return serverWith('oversized-tools', () => ({
    tools: [toolNamed('small_tool_a'), toolNamed('huge_tool', 'x'.repeat(70_000)), toolNamed('small_tool_b')],
  }));
}

/** 30 tools whose input schemas are about 12 KB each: a full-detail page of them would pass 256 KiB. */
export function createBulkyToolsServer(): Server {
  const schema = (n: number) => ({
    type: 'object',
    properties: Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`option_${i}`, { type: 'string', description: `Option ${i} of bulky tool ${n}. ${'Long explanation of this option. '.repeat(8)}` }]),
    ),
  });
  const all: Tool[] = Array.from({ length: 30 }, (_, i) => ({
    name: `bulky_tool_${String(i + 1).padStart(2, '0')}`, description: `Bulky report generator number ${i + 1}.`, inputSchema: schema(i + 1) as Tool['inputSchema'],
  }));
  return serverWith('bulky-tools', () => ({ tools: all }));
}
