import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { DEFAULT_X402 } from '../payment.options';
import { HttpFacilitator } from './http-facilitator';
import { requirementsFor } from './payment-required';
import { type PaymentPayload } from './x402.types';

/** Issue 12 point 1: a remote facilitator's answer is a payment only when it says so plainly; anything else refuses. */
describe('HttpFacilitator (x402 facilitator HTTP API)', () => {
  let server: Server;
  let base: string;
  let answer: { status: number; body: string };
  const seen: { path: string; body: Record<string, unknown> }[] = [];
  const req = requirementsFor(DEFAULT_X402, 500n);
  const payment = { x402Version: 2, accepted: req, payload: { signature: '0x00', authorization: {} } } as unknown as PaymentPayload;

  beforeAll(async () => {
    server = createServer((r, res) => {
      let text = '';
      r.on('data', (c) => (text += c));
      r.on('end', () => {
        seen.push({ path: r.url ?? '', body: JSON.parse(text) });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/facilitator`;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  it('posts the payload and the requirements to /verify and /settle, and returns a settled transaction', async () => {
    const f = new HttpFacilitator(base, 2000);
    answer = { status: 200, body: JSON.stringify({ isValid: true, payer: '0xabc' }) };
    expect(await f.verify(payment, req)).toEqual({ isValid: true, payer: '0xabc' });
    answer = { status: 200, body: JSON.stringify({ success: true, transaction: '0x1234', network: 'eip155:84532', payer: '0xabc' }) };
    expect(await f.settle(payment, req)).toEqual({ success: true, transaction: '0x1234', network: 'eip155:84532', payer: '0xabc' });
    expect(seen.map((s) => s.path)).toEqual(['/facilitator/verify', '/facilitator/settle']);
    expect(seen[0]!.body).toEqual({ x402Version: 2, paymentPayload: payment, paymentRequirements: req });
  });

  it('refuses on an error status, a body that is not a verdict, a settlement without a transaction, or no answer', async () => {
    const f = new HttpFacilitator(base, 2000);
    answer = { status: 500, body: JSON.stringify({ isValid: true }) };
    expect(await f.verify(payment, req)).toMatchObject({ isValid: false, invalidReason: 'facilitator_unavailable' });
    answer = { status: 200, body: 'not json' };
    expect(await f.verify(payment, req)).toMatchObject({ isValid: false });
    answer = { status: 200, body: JSON.stringify({ isValid: false, invalidReason: 'insufficient_funds' }) };
    expect(await f.verify(payment, req)).toMatchObject({ isValid: false, invalidReason: 'facilitator_refused' });
    answer = { status: 200, body: JSON.stringify({ success: true }) };
    expect(await f.settle(payment, req)).toMatchObject({ success: false });
    const unreachable = new HttpFacilitator('http://127.0.0.1:9/', 500);
    expect(await unreachable.settle(payment, req)).toMatchObject({ success: false, errorReason: 'facilitator_unavailable' });
  });
});
