import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/**
 * The 2025-era provider of the tests (SDK 1.x on purpose): an upstream whose contract can change
 * while it runs (a test knob), kept
 * with sessions so it can tell connected clients with
 * `notifications/tools/list_changed` — as a real provider deploying a new
 * version would.
 */
export class MutableToolsProvider {
  private variant = 1;
  private readonly servers = new Set<{ server: McpServer; tool: RegisteredTool }>();

  createServer(): McpServer {
    const server = new McpServer({ name: 'mutable-tools', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    const tool = server.registerTool('lookup_order', this.definition(), async (args: Record<string, unknown>) => ({ content: [{ type: 'text' as const, text: `order ${String(args['orderId'])}` }] }));
    const entry = { server, tool };
    this.servers.add(entry);
    server.server.onclose = () => this.servers.delete(entry);
    return server;
  }

  /** Switches the contract; every connected session hears list_changed. */
  setVariant(variant: number): void {
    this.variant = variant;
    for (const { tool } of this.servers) tool.update(this.definition());
  }

  private definition() {
    const input: Record<string, z.ZodTypeAny> = { orderId: z.string() };
    if (this.variant !== 1) input['includeHistory'] = z.boolean().optional();
    return { description: 'Looks up an order by id.', inputSchema: input, annotations: { readOnlyHint: true } };
  }
}
