import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { DEFAULT_X402 } from '../payment.options';
import { HttpFacilitator } from './http-facilitator';
import { requirementsFor } from './payment-required';
import { type PaymentPayload } from './x402.types';

/**
 * A remote facilitator's answer is a payment only when it says so plainly; a
 * settle whose outcome the facilitator did not state (timeout, 5xx, not a verdict, no answer) is unknown — never a
 * refusal, never a payment.
 */
describe('HttpFacilitator (x402 facilitator HTTP API via @x402/core)', () => {
  let server: Server;
  let base: string;
  let answer: { status: number; body: string; delayMs?: number };
  const seen: { path: string; body: Record<string, unknown>; authorization: string | undefined }[] = [];
  const req = { ...requirementsFor({ ...DEFAULT_X402, payTo: '0x2222222222222222222222222222222222222222' }, 500n) };
  const payment = { x402Version: 2, accepted: req, payload: { signature: '0x00', authorization: {} } } as unknown as PaymentPayload;

  beforeAll(async () => {
    server = createServer((r, res) => {
      let text = '';
      r.on('data', (c) => (text += c));
      r.on('end', () => {
        seen.push({ path: r.url ?? '', body: text ? JSON.parse(text) : {}, authorization: r.headers.authorization });
        setTimeout(() => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body), answer.delayMs ?? 0);
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/facilitator`;
  });
  afterAll(() => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }));

  it('posts the payload and the requirements to /verify and /settle with its credential, and returns a settled transaction', async () => {
    const f = new HttpFacilitator(base, 2000, 'facilitator-secret-token');
    answer = { status: 200, body: JSON.stringify({ isValid: true, payer: '0xabc' }) };
    expect(await f.verify(payment, req)).toEqual({ kind: 'valid', payer: '0xabc' });
    answer = { status: 200, body: JSON.stringify({ success: true, transaction: '0x1234', network: 'eip155:84532', payer: '0xabc' }) };
    expect(await f.settle(payment, req)).toEqual({ kind: 'settled', response: { success: true, transaction: '0x1234', network: 'eip155:84532', payer: '0xabc' } });
    expect(seen.map((s) => s.path)).toEqual(['/facilitator/verify', '/facilitator/settle']);
    expect(seen[0]!.body).toMatchObject({ x402Version: 2, paymentPayload: payment, paymentRequirements: req });
    expect(seen.map((s) => s.authorization)).toEqual(['Bearer facilitator-secret-token', 'Bearer facilitator-secret-token']);
    expect(f.name).toBe(new URL(base).origin);
  });

  it('a verify answer without a payer is still valid (the payer comes from the authorization)', async () => {
    answer = { status: 200, body: JSON.stringify({ isValid: true }) };
    expect(await new HttpFacilitator(base, 2000).verify(payment, req)).toEqual({ kind: 'valid' });
  });

  it('a stated refusal is a refusal: invalid verify, settle success false, a 4xx verdict', async () => {
    const f = new HttpFacilitator(base, 2000);
    answer = { status: 200, body: JSON.stringify({ isValid: false, invalidReason: 'insufficient_funds' }) };
    expect(await f.verify(payment, req)).toEqual({ kind: 'invalid', reason: 'insufficient_funds' });
    answer = { status: 200, body: JSON.stringify({ success: false, errorReason: 'invalid_exact_evm_payload_authorization_nonce_used', transaction: '', network: 'eip155:84532' }) };
    expect(await f.settle(payment, req)).toEqual({ kind: 'refused', reason: 'invalid_exact_evm_payload_authorization_nonce_used' });
    answer = { status: 400, body: JSON.stringify({ success: false, errorReason: 'invalid_payload', transaction: '', network: 'eip155:84532' }) };
    expect(await f.settle(payment, req)).toEqual({ kind: 'refused', reason: 'invalid_payload' });
  });

  it('a settle without a verdict is unknown: timeout, 5xx, not JSON, success without a transaction, nobody listening', async () => {
    const f = new HttpFacilitator(base, 300);
    answer = { status: 200, body: JSON.stringify({ success: true, transaction: '0x1', network: 'eip155:84532' }), delayMs: 1000 };
    expect(await f.settle(payment, req)).toMatchObject({ kind: 'unknown', problem: expect.stringMatching(/timed out after 300 ms/) });
    answer = { status: 502, body: 'bad gateway' };
    expect(await f.settle(payment, req)).toMatchObject({ kind: 'unknown' });
    answer = { status: 500, body: JSON.stringify({ success: false, errorReason: 'unexpected', transaction: '', network: 'eip155:84532' }) };
    expect(await f.settle(payment, req)).toMatchObject({ kind: 'unknown' });
    answer = { status: 200, body: 'not json' };
    expect(await f.settle(payment, req)).toMatchObject({ kind: 'unknown' });
    answer = { status: 200, body: JSON.stringify({ success: true, transaction: '', network: 'eip155:84532' }) };
    expect(await f.settle(payment, req)).toMatchObject({ kind: 'unknown' });
    const unreachable = await new HttpFacilitator('http://127.0.0.1:9/', 500).settle(payment, req);
    expect(unreachable).toMatchObject({ kind: 'unknown', problem: expect.stringMatching(/ECONNREFUSED|fetch failed/) });
    expect(await new HttpFacilitator('http://127.0.0.1:9/', 500).verify(payment, req)).toMatchObject({ kind: 'unavailable' });
  });

  it('the upto address: a call on the consumer path never waits on /supported; the answer is kept once known', async () => {
    const f = new HttpFacilitator(base, 2000);
    const supported = { kinds: [{ x402Version: 2, scheme: 'upto', network: 'eip155:84532', extra: { facilitatorAddress: '0xfac1117470000000000000000000000000000fa1' } }], extensions: [], signers: {} };
    answer = { status: 200, body: JSON.stringify(supported), delayMs: 500 };
    const t0 = Date.now();
    expect(await f.uptoAddress('eip155:84532')).toBeUndefined(); // not known yet: asked in the background, not awaited
    expect(Date.now() - t0).toBeLessThan(400);
    expect(await f.uptoAddress('eip155:84532', true)).toBe('0xfac1117470000000000000000000000000000fa1');
    answer = { status: 500, body: 'down' };
    expect(await f.uptoAddress('eip155:84532')).toBe('0xfac1117470000000000000000000000000000fa1');
    expect(seen.filter((x) => x.path.endsWith('/supported'))).toHaveLength(1);
  });
});
