import { fetchCapturingSettlementOverrides, takeSettlementOverrides } from './settlement-overrides';

/** G5.3: an x402 server's Settlement-Overrides header, captured per call and taken once (pure: a stand-in fetch). */
describe('fetchCapturingSettlementOverrides', () => {
  const answer = (headers: Record<string, string>) => async () => new Response('{}', { headers });
  const call = (intentId: string) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', _meta: { 'tollgate/intentId': intentId } } });

  it('keeps the header of a tools/call response for its intent, taken once', async () => {
    await fetchCapturingSettlementOverrides(answer({ 'Settlement-Overrides': '{"amount":"10"}' }))('http://p/mcp', { method: 'POST', body: call('i-1') });
    expect(takeSettlementOverrides('i-1')).toBe('{"amount":"10"}');
    expect(takeSettlementOverrides('i-1')).toBeUndefined();
  });

  it('ignores responses without it, and requests that are not a tool call of an intent', async () => {
    await fetchCapturingSettlementOverrides(answer({}))('http://p/mcp', { method: 'POST', body: call('i-2') });
    expect(takeSettlementOverrides('i-2')).toBeUndefined();
    const f = fetchCapturingSettlementOverrides(answer({ 'Settlement-Overrides': '{"amount":"10"}' }));
    await f('http://p/mcp', { method: 'POST', body: JSON.stringify({ method: 'tools/list', params: { _meta: { 'tollgate/intentId': 'i-3' } } }) });
    await f('http://p/mcp', { method: 'POST', body: 'not json' });
    expect(takeSettlementOverrides('i-3')).toBeUndefined();
  });
});
