import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';

const OPERATION_KEY_META = 'tollgate/operationKey';

/** `slow_echo` answers after `delayMs`: the upstream of in-progress, deadline and crash tests. */
export function createSlowToolsServer(): Server {
  const server = new Server({ name: 'slow-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
  const tools: Tool[] = [{
    name: 'slow_echo', description: 'Echoes a message after a delay.',
    inputSchema: { type: 'object', properties: { message: { type: 'string' }, delayMs: { type: 'integer', minimum: 0, maximum: 60000 } }, required: ['message'] },
    annotations: { readOnlyHint: true },
  }];
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const args = (req.params.arguments ?? {}) as { message?: string; delayMs?: number };
    await new Promise((r) => setTimeout(r, args.delayMs ?? 0));
    return { content: [{ type: 'text', text: `slow: ${String(args.message)}` }] };
  });
  return server;
}

export interface ReviewTicket {
  ticketId: string;
  sourceId: string;
  title: string;
  operationKey: string | null;
  createdAt: string;
}

/**
 * Source 003's example: a review-ticket service that deduplicates creation by
 * the operation key the platform forwards in `_meta`, and can be read back by
 * that key. Its store lives as long as the process.
 */
export class ReviewTicketsProvider {
  readonly tickets: ReviewTicket[] = [];

  createServer(): Server {
    const server = new Server({ name: 'review-tickets', version: '1.0.0' }, { capabilities: { tools: {} } });
    const tools: Tool[] = [
      {
        name: 'create_review_ticket', description: 'Creates a review ticket for a source document. Deduplicated by operation key.',
        inputSchema: { type: 'object', additionalProperties: false, properties: { source_id: { type: 'string', minLength: 1 }, title: { type: 'string', minLength: 1, maxLength: 200 } }, required: ['source_id', 'title'] },
        outputSchema: { type: 'object', properties: { ticket_id: { type: 'string' }, source_id: { type: 'string' }, title: { type: 'string' }, deduplicated: { type: 'boolean' } }, required: ['ticket_id', 'source_id', 'title', 'deduplicated'] },
        annotations: { readOnlyHint: false, idempotentHint: true },
      },
      {
        name: 'get_review_ticket', description: 'Reads a review ticket back by the operation key that created it.',
        inputSchema: { type: 'object', additionalProperties: false, properties: { operation_key: { type: 'string', minLength: 1 } }, required: ['operation_key'] },
        annotations: { readOnlyHint: true },
      },
    ];
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
    server.setRequestHandler(CallToolRequestSchema, async (req) => {
      const args = (req.params.arguments ?? {}) as Record<string, string>;
      const key = typeof req.params._meta?.[OPERATION_KEY_META] === 'string' ? (req.params._meta[OPERATION_KEY_META] as string) : null;
      if (req.params.name === 'create_review_ticket') {
        const existing = key ? this.tickets.find((t) => t.operationKey === key) : undefined;
        const ticket = existing ?? { ticketId: `RT-${randomUUID().slice(0, 8)}`, sourceId: args['source_id']!, title: args['title']!, operationKey: key, createdAt: new Date().toISOString() };
        if (!existing) this.tickets.push(ticket);
        const out = { ticket_id: ticket.ticketId, source_id: ticket.sourceId, title: ticket.title, deduplicated: existing !== undefined };
        return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
      }
      const found = this.tickets.find((t) => t.operationKey === args['operation_key']);
      if (!found) return { isError: true, content: [{ type: 'text', text: 'No ticket for this operation key.' }] };
      return { content: [{ type: 'text', text: JSON.stringify(found) }], structuredContent: { ...found } };
    });
    return server;
  }
}
