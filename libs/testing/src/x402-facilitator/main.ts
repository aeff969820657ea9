/**
 * A stand-in x402 facilitator for the tests, as its own process, behaving like a chain-backed one (issue 21 point 2):
 * `POST /verify`, `POST /settle`, `GET /supported` (x402 v2, exact scheme, one EVM network, the payment-identifier
 * extension). It checks the EIP-712 signature, the recipient, the amount, the validity window, the payer's balance on
 * its simulated chain and the nonce; a settlement moves the money, spends the nonce and remembers its answer under the
 * payment identifier, all written to its state file before it answers — so a repeat of the same payment identifier
 * gets the same answer and never a second transfer, even across a crash.
 *
 * Faults for the tests (`POST /admin/faults`): the next settles may answer late (`delayMs`, the transfer done first),
 * kill the process after the transfer and before answering (`die-after-transfer`), or before it (`die-before-transfer`).
 * Env: PORT, FACILITATOR_NETWORK, FACILITATOR_STATE (file), FACILITATOR_TOKEN (required bearer token, optional).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { extractPaymentIdentifier } from '@x402/extensions/payment-identifier';
import { FacilitatorLedger } from './facilitator-ledger';
import { type ExactPayload, problemOf } from './exact-check';

const network = process.env['FACILITATOR_NETWORK'] ?? 'eip155:84532';
const token = process.env['FACILITATOR_TOKEN'];
const ledger = new FacilitatorLedger(process.env['FACILITATOR_STATE'] ?? 'facilitator-state.json');
type Fault = { kind: 'none' } | { kind: 'delay'; delayMs: number } | { kind: 'die-after-transfer' } | { kind: 'die-before-transfer' };
let faults: { fault: Fault; times: number } = { fault: { kind: 'none' }, times: 0 };

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

function send(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

function takeFault(): Fault {
  if (faults.times <= 0) return { kind: 'none' };
  faults.times -= 1;
  return faults.fault;
}

async function verify(b: Record<string, unknown>) {
  const p = b['paymentPayload'] as ExactPayload;
  const problem = await problemOf(p, b['paymentRequirements'] as Record<string, unknown>, network, ledger);
  return problem ? { isValid: false, invalidReason: problem, payer: p?.payload?.authorization?.from } : { isValid: true, payer: p.payload.authorization.from };
}

async function settle(b: Record<string, unknown>, res: ServerResponse): Promise<void> {
  const p = b['paymentPayload'] as ExactPayload;
  const paymentId = extractPaymentIdentifier(p as never);
  const known = paymentId ? ledger.state.settlements[paymentId] : undefined;
  if (known) return send(res, 200, known);
  const v = await verify(b);
  if (!v.isValid) return send(res, 200, { success: false, errorReason: v.invalidReason, payer: v.payer, transaction: '', network });
  const fault = takeFault();
  if (fault.kind === 'die-before-transfer') process.kill(process.pid, 'SIGKILL');
  const a = p.payload.authorization;
  const transaction = `0x${randomBytes(32).toString('hex')}`;
  const response = { success: true, payer: a.from, transaction, network };
  ledger.transfer({ transaction, from: a.from, to: a.to, value: a.value, nonce: a.nonce, paymentId, at: new Date().toISOString() }, response);
  if (fault.kind === 'die-after-transfer') process.kill(process.pid, 'SIGKILL');
  if (fault.kind === 'delay') await new Promise((r) => setTimeout(r, fault.delayMs));
  send(res, 200, response);
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const admin = path.startsWith('/admin/');
  if (!admin && token && req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'unauthorized' });
  if (req.method === 'GET' && path === '/supported') {
    return send(res, 200, { kinds: [{ x402Version: 2, scheme: 'exact', network }], extensions: ['payment-identifier'], signers: {} });
  }
  if (req.method === 'POST' && path === '/verify') return send(res, 200, await verify(await body(req)));
  if (req.method === 'POST' && path === '/settle') return settle(await body(req), res);
  if (req.method === 'POST' && path === '/admin/fund') {
    const b = await body(req);
    ledger.fund(String(b['address']), BigInt(String(b['amount'])));
    return send(res, 200, { balance: ledger.balanceOf(String(b['address'])).toString() });
  }
  if (req.method === 'POST' && path === '/admin/faults') {
    const b = await body(req);
    faults = { fault: b['fault'] as Fault, times: Number(b['times'] ?? 1) };
    return send(res, 200, faults);
  }
  if (req.method === 'GET' && path === '/admin/state') return send(res, 200, ledger.state);
  send(res, 404, { error: 'not found' });
}

const server = createServer((req, res) => {
  route(req, res).catch((err: unknown) => send(res, 500, { error: String(err) }));
});
server.listen(Number(process.env['PORT'] ?? 4021), '127.0.0.1', () => {
  process.stdout.write(`x402 facilitator listening on ${JSON.stringify(server.address())}\n`);
});
