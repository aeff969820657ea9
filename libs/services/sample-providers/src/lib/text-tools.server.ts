import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

/**
 * "text-tools": a real upstream MCP server used by the demo and the tests.
 * Read-only tools with declared output schemas, so the gateway's
 * output-contract confirmation has something to check.
 */
export function createTextToolsServer(): McpServer {
  const server = new McpServer({ name: 'text-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'word_count',
    {
      description: 'Counts the words and characters of a text.',
      inputSchema: z.object({ text: z.string().max(100_000).describe('The text to count.') }),
      outputSchema: z.object({ words: z.number().int(), characters: z.number().int() }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ text }) => {
      const counts = { words: text.trim() === '' ? 0 : text.trim().split(/\s+/).length, characters: [...text].length };
      return { content: [{ type: 'text', text: JSON.stringify(counts) }], structuredContent: counts };
    },
  );
  server.registerTool(
    'reverse_text',
    {
      description: 'Returns the text with its characters in reverse order.',
      inputSchema: z.object({ text: z.string().max(100_000) }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ text }) => ({ content: [{ type: 'text', text: [...text].reverse().join('') }] }),
  );
  return server;
}
