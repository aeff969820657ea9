import { Server, type Tool } from '@modelcontextprotocol/server';
import { POLICY_TOOLS, type PolicyToolsService } from './policy-tools.service';
import { errorResult } from './policy-tool-error';

/**
 * The policy tools as an MCP server (any transport, both MCP eras). Unknown JSON-RPC methods
 * get -32601 from the SDK; an unknown tool name is the fixed E_INTERNAL result.
 */
export function createPolicyMcpServer(tools: PolicyToolsService): Server {
  const server = new Server({ name: 'tollgate-policy', version: '0.1.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', async () => ({ tools: POLICY_TOOLS.map((t) => ({ ...t, inputSchema: t.inputSchema as unknown as Tool['inputSchema'] })) }));
  server.setRequestHandler('tools/call', async (req) => {
    try {
      return (await tools.call(req.params.name, req.params.arguments)) as never;
    } catch {
      return errorResult('E_INTERNAL', '') as never;
    }
  });
  return server;
}
