import { type CatalogToolChangedPayload } from '@tollgate/contracts';

const NOUNS = ['weather', 'forecast', 'ticket', 'invoice', 'order', 'customer', 'email', 'sms', 'flight', 'hotel', 'currency', 'stock', 'image', 'video',
  'document', 'calendar', 'event', 'address', 'route', 'payment', 'refund', 'shipment', 'product', 'review', 'translation', 'contract', 'lead', 'repository', 'issue', 'build'];
const VERBS = ['get', 'create', 'update', 'delete', 'search', 'list', 'convert', 'summarize', 'send', 'book', 'track', 'validate', 'export', 'import', 'analyze'];
const CATEGORIES = ['weather', 'support', 'finance', 'messaging', 'travel', 'productivity', 'media', 'maps', 'commerce', 'developer', 'language', 'data'];

/** A deterministic catalog of `n` tools with realistic names and words, for benchmarks. */
export function generateCatalog(n: number): CatalogToolChangedPayload[] {
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const pick = <T>(a: T[]) => a[Math.floor(rnd() * a.length)]!;
  return Array.from({ length: n }, (_, i) => {
    const verb = pick(VERBS);
    const noun = pick(NOUNS);
    const other = pick(NOUNS);
    const name = `${verb}_${noun}_${i}`;
    const category = pick(CATEGORIES);
    const description = `${verb[0]!.toUpperCase()}${verb.slice(1)}s a ${noun} with its ${other} details for a ${pick(NOUNS)} workflow. Provider ${i % 97}.`;
    return {
      toolId: name, name, status: 'active', version: 1, contractHash: 'a'.repeat(64), retiredVersions: [], kind: verb === 'get' || verb === 'list' || verb === 'search' ? 'read' : 'write',
      category, tags: [noun, other], summary: description.split('.')[0]! + '.', description,
      inputSchema: { type: 'object', properties: { [`${noun}Id`]: { type: 'string' }, note: { type: 'string' } }, required: [`${noun}Id`] },
      optionalInputFields: ['note'], optionalOutputFields: [], examples: [], changelog: [], notReviewed: i % 3 === 0, tier: 'standard',
      price: { amountMinor: String((i % 5) * 1000), asset: 'USDC' }, assetDecimals: 6,
      bindings: [{ bindingId: `p${i % 97}:${name}`, providerId: `p${i % 97}`, transport: 'http', endpoint: 'http://127.0.0.1:9/mcp', upstreamToolName: name, contractHash: 'a'.repeat(64), health: 'healthy' }],
    } as CatalogToolChangedPayload;
  });
}

export const QUERIES = [
  'weather forecast for a city', 'create a support ticket', 'convert currency', 'send an email to a customer', 'book a hotel', 'track shipment',
  'summarize document', 'refund a payment', 'list orders of a customer', 'translate text', 'stock price', 'search flights', 'export invoice', 'calendar event',
  'analyze video', 'validate address', 'update lead', 'repository build', 'tickt', 'weathr', '',
];
