/**
 * A stand-in x402 facilitator and its chain for the tests, as its own process, behaving like a chain-backed one:
 * `POST /verify`, `POST /settle`, `GET /supported` (x402 v2, one EVM network: the exact scheme, and upto through
 * `@x402/evm`'s own facilitator scheme on the stand-in chain — `FACILITATOR_REFUSES_PARTIAL=true`, or the fault
 * `refuse-partial`, refuses a settle for less than the permit's maximum, as a hosted facilitator once did). It checks the EIP-712
 * signature, the recipient, the amount, the validity window, the payer's balance on its simulated chain and the nonce;
 * a settlement moves the money and spends the nonce, written to its state file before it answers.
 *
 * Like a real facilitator it does NOT deduplicate by payment identifier unless `FACILITATOR_DEDUPES=true`: a repeat
 * of a settled payment is answered "nonce already used". The chain is readable at `POST /rpc` (Ethereum JSON-RPC, see
 * ChainRpc), so a payment service finds out what really happened the way it would on a real network.
 *
 * Faults for the tests (`POST /admin/faults`): the next settles may answer late (`delayMs`, the transfer done first),
 * kill the process after the transfer and before answering (`die-after-transfer`), or before it (`die-before-transfer`);
 * `rpc-down` answers the next chain reads 503. `POST /admin/cancel` spends a nonce as the payer's cancellation would.
 * Env: PORT, FACILITATOR_NETWORK, FACILITATOR_STATE (file), FACILITATOR_TOKEN (required bearer token, optional),
 * FACILITATOR_DEDUPES.
 */
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { jsonBody as body, sendJson as send, serveStandIn } from '../lib/stand-in-http';
import { randomBytes } from 'node:crypto';
import { extractPaymentIdentifier } from '@x402/extensions/payment-identifier';
import type * as Viem from 'viem' with { 'resolution-mode': 'import' };
import { UptoEvmScheme } from '@x402/evm/upto/facilitator';
import { FacilitatorLedger } from './facilitator-ledger';
import { StandInPermit2Signer } from './permit2-signer';
import { type ExactPayload, problemOf } from './exact-check';
import { ChainRpc } from './chain-rpc';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { getAddress } = require('viem') as typeof Viem;

const network = process.env['FACILITATOR_NETWORK'] ?? 'eip155:84532';
const token = process.env['FACILITATOR_TOKEN'];
const dedupes = process.env['FACILITATOR_DEDUPES'] === 'true';
const ledger = new FacilitatorLedger(process.env['FACILITATOR_STATE'] ?? 'facilitator-state.json');
const chain = new ChainRpc(ledger, Number(network.split(':')[1]));
/** `upto` through `@x402/evm`'s own facilitator scheme, on the stand-in chain; the address payers sign their permits to. */
const permit2 = new StandInPermit2Signer(ledger, getAddress(process.env['FACILITATOR_ADDRESS'] ?? '0xfac1117470000000000000000000000000000fa1'));
const upto = new UptoEvmScheme(permit2 as never);
/** Like a hosted facilitator once did: refuse to settle an upto authorization for less than its maximum (or per fault). */
const refusesPartial = process.env['FACILITATOR_REFUSES_PARTIAL'] === 'true';
type Fault = { kind: 'none' } | { kind: 'delay'; delayMs: number } | { kind: 'die-after-transfer' } | { kind: 'die-before-transfer' } | { kind: 'rpc-down' } | { kind: 'refuse-partial' };
/** Armed faults, at most one per kind, each for its next `times` uses. */
let faults: { fault: Fault; times: number }[] = [];



function takeFault(kinds: readonly Fault['kind'][]): Fault {
  const armed = faults.find((f) => f.times > 0 && kinds.includes(f.fault.kind));
  if (!armed) return { kind: 'none' };
  armed.times -= 1;
  return armed.fault;
}

function isUpto(b: Record<string, unknown>): boolean {
  return (b['paymentPayload'] as { accepted?: { scheme?: unknown } } | undefined)?.accepted?.scheme === 'upto';
}

async function verify(b: Record<string, unknown>) {
  if (isUpto(b)) return upto.verify(b['paymentPayload'] as never, b['paymentRequirements'] as never);
  const p = b['paymentPayload'] as ExactPayload;
  const problem = await problemOf(p, b['paymentRequirements'] as Record<string, unknown>, network, ledger);
  return problem ? { isValid: false, invalidReason: problem, payer: p?.payload?.authorization?.from } : { isValid: true, payer: p.payload.authorization.from };
}

async function settle(b: Record<string, unknown>, res: ServerResponse): Promise<void> {
  const p = b['paymentPayload'] as ExactPayload;
  const paymentId = extractPaymentIdentifier(p as never);
  const known = dedupes && paymentId ? ledger.state.settlements[paymentId] : undefined;
  if (known) return send(res, 200, known);
  if (isUpto(b)) return settleUpto(b, res, paymentId);
  const v = await verify(b);
  if (!v.isValid) return send(res, 200, { success: false, errorReason: v.invalidReason, payer: v.payer, transaction: '', network });
  const fault = takeFault(['delay', 'die-after-transfer', 'die-before-transfer']);
  if (fault.kind === 'die-before-transfer') process.kill(process.pid, 'SIGKILL');
  const a = p.payload.authorization;
  const transaction = `0x${randomBytes(32).toString('hex')}`;
  const response = { success: true, payer: a.from, transaction, network };
  const asset = String((b['paymentRequirements'] as Record<string, unknown>)['asset']);
  ledger.transfer({ transaction, from: a.from, to: a.to, value: a.value, nonce: a.nonce, paymentId, at: new Date().toISOString(), asset }, response);
  if (fault.kind === 'die-after-transfer') process.kill(process.pid, 'SIGKILL');
  if (fault.kind === 'delay') await new Promise((r) => setTimeout(r, fault.delayMs));
  send(res, 200, response);
}

/** An upto settle for the requirement's amount (the charge), by `@x402/evm`'s facilitator scheme; faults as for exact. */
async function settleUpto(b: Record<string, unknown>, res: ServerResponse, paymentId: string | null): Promise<void> {
  const payload = b['paymentPayload'] as { payload: { permit2Authorization: { from: string; permitted: { amount: string } } } };
  const requirements = b['paymentRequirements'] as { amount: string };
  const auth = payload.payload.permit2Authorization;
  const partial = BigInt(requirements.amount) < BigInt(auth.permitted.amount);
  if (partial && (refusesPartial || takeFault(['refuse-partial']).kind === 'refuse-partial')) {
    return send(res, 200, { success: false, errorReason: 'invalid_upto_evm_partial_settlement_unsupported', payer: auth.from, transaction: '', network });
  }
  const fault = takeFault(['delay', 'die-after-transfer', 'die-before-transfer']);
  if (fault.kind === 'die-before-transfer') process.kill(process.pid, 'SIGKILL');
  permit2.onSent = fault.kind === 'die-after-transfer' ? () => process.kill(process.pid, 'SIGKILL') : () => undefined;
  const response = await upto.settle(payload as never, requirements as never);
  if (response.success && paymentId) ledger.remember(paymentId, response as unknown as Record<string, unknown>);
  if (fault.kind === 'delay') await new Promise((r) => setTimeout(r, fault.delayMs));
  send(res, 200, response);
}

/** One JSON-RPC request to the chain (a public RPC: no bearer token). */
async function rpc(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const r = await body(req);
  if (takeFault(['rpc-down']).kind === 'rpc-down') return send(res, 503, { error: 'the stand-in chain is down' });
  try {
    send(res, 200, { jsonrpc: '2.0', id: r['id'], result: chain.answer(String(r['method']), (r['params'] as unknown[]) ?? []) });
  } catch (error) {
    send(res, 200, { jsonrpc: '2.0', id: r['id'], error: { code: (error as { code?: number }).code ?? -32000, message: (error as Error).message } });
  }
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (req.method === 'POST' && path === '/rpc') return rpc(req, res);
  const admin = path.startsWith('/admin/');
  if (!admin && token && req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'unauthorized' });
  if (req.method === 'GET' && path === '/supported') {
    return send(res, 200, {
      kinds: [{ x402Version: 2, scheme: 'exact', network }, { x402Version: 2, scheme: 'upto', network, extra: upto.getExtra(network) }],
      extensions: ['payment-identifier'], signers: { 'eip155:*': upto.getSigners(network) },
    });
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
    const fault = b['fault'] as Fault;
    faults = fault.kind === 'none' ? [] : [...faults.filter((f) => f.fault.kind !== fault.kind), { fault, times: Number(b['times'] ?? 1) }];
    return send(res, 200, faults);
  }
  if (req.method === 'POST' && path === '/admin/cancel') {
    const b = await body(req);
    ledger.cancel(String(b['from']), String(b['nonce']), String(b['asset']));
    return send(res, 200, { cancelled: true });
  }
  if (req.method === 'GET' && path === '/admin/state') return send(res, 200, ledger.state);
  send(res, 404, { error: 'not found' });
}

serveStandIn('x402 facilitator', 4021, route);
