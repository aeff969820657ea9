import { Server, type Tool } from '@modelcontextprotocol/server';

/** The summariser's price: 0.001 USDC per 100 characters read, at least 0.005 USDC, at most 0.10 USDC a call. */
export const SUMMARY_PRICE = { unit: '100_chars', unitPriceMinor: '1000', minimumMinor: '5000', maximumMinor: '100000' } as const;

/** The first sentences of a text, up to about a fifth of it (a sample: real summarisers charge per token read). */
function summaryOf(text: string): string {
  const sentences = text.replace(/\s+/g, ' ').trim().match(/[^.!?]+[.!?]?/g) ?? [];
  const out: string[] = [];
  for (const s of sentences) {
    if (out.join(' ').length + s.length > Math.max(80, text.length / 5)) break;
    out.push(s.trim());
  }
  return out.join(' ') || text.slice(0, 80);
}

/**
 * "summaries": a metered sample provider. `summarize_text` is priced per 100 characters read (declared in its
 * listing's `metered` price) and reports what it read in `_meta["tollgate/usage"]`, as any metered provider does.
 * `report_usage` (a test fixture, not in the demo) reports whatever usage it is told: over, under, garbage — in its
 * result's `_meta`, or (`settlementOverrides`) in the `Settlement-Overrides` response header, as an x402 server does.
 */
export function createMeteredToolsServer(options: { fixtures: boolean }): Server {
  const server = new Server({ name: 'summaries', version: '1.0.0' }, { capabilities: { tools: {} } });
  const tools: Tool[] = [{
    name: 'summarize_text', description: 'Summarises a text in a few sentences. Priced by the characters read: 0.001 USDC per 100, at least 0.005, at most 0.10 USDC.',
    inputSchema: { type: 'object', properties: { text: { type: 'string', maxLength: 100_000 } }, required: ['text'] },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    _meta: { 'tollgate/listing': { category: 'text', asset: 'USDC', metered: SUMMARY_PRICE } },
  }];
  if (options.fixtures) {
    tools.push({
      name: 'report_usage', description: 'Echoes a text and reports exactly the usage it is given (a test fixture for metered charges).',
      inputSchema: { type: 'object', properties: { text: { type: 'string' }, usage: {}, settlementOverrides: { type: 'string' } }, required: ['text'] },
      annotations: { readOnlyHint: true },
      _meta: { 'tollgate/listing': { category: 'testing', asset: 'USDC', metered: SUMMARY_PRICE } },
    });
  }
  server.setRequestHandler('tools/list', async () => ({ tools }));
  server.setRequestHandler('tools/call', async (req) => {
    const args = (req.params.arguments ?? {}) as { text?: string; usage?: unknown };
    const text = typeof args.text === 'string' ? args.text : '';
    if (req.params.name === 'report_usage' && options.fixtures) {
      return { content: [{ type: 'text', text }], ...(args.usage === undefined ? {} : { _meta: { 'tollgate/usage': args.usage } }) };
    }
    const units = Math.ceil([...text].length / 100);
    return { content: [{ type: 'text', text: summaryOf(text) }], _meta: { 'tollgate/usage': { unit: SUMMARY_PRICE.unit, units } } };
  });
  return server;
}
