/**
 * The backend of the sandbox MPP payment method, as its own process (as an x402 facilitator is): payment's method
 * (built with mppx's `Method.from` / `Method.toServer`) verifies a credential by asking it to charge the payer's
 * token, or to authorize an amount captured later (a metered call's hold-then-capture). Every payment is recorded
 * by its reference — the MPP challenge id — before the answer, and asked again it answers what it did:
 * `GET /payments/<reference>` is the method's own record an unknown outcome is decided by.
 *
 * `POST /charge`, `POST /authorize` `{ token, amount, currency, reference }`; `POST /capture` `{ reference, amount }`;
 * `GET /payments/<reference>`. Test knobs: `POST /admin/wallets` `{ amount }` → a funded payer token;
 * `POST /admin/faults` `{ fault: { kind: 'die-after-payment' | 'refuse-capture' | 'down' }, times }`; `GET /admin/state`.
 * Env: PORT, MPP_SANDBOX_STATE (file), MPP_SANDBOX_TOKEN (bearer token the method sends, optional).
 */
import { randomBytes } from 'node:crypto';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { jsonBody as body, sendJson as send, serveStandIn } from '../lib/stand-in-http';
import { type SandboxAnswer, SandboxBook } from './sandbox-book';

const book = new SandboxBook(process.env['MPP_SANDBOX_STATE'] ?? 'mpp-sandbox-state.json');
const token = process.env['MPP_SANDBOX_TOKEN'];
type Fault = 'die-after-payment' | 'refuse-capture' | 'down';
let faults: { kind: Fault; times: number }[] = [];

function take(kind: Fault): boolean {
  const f = faults.find((x) => x.kind === kind && x.times > 0);
  if (f) f.times -= 1;
  return f !== undefined;
}



function answer(res: ServerResponse, reference: string, a: SandboxAnswer): void {
  if (!a.ok) return send(res, a.status, { error: a.error });
  if (take('die-after-payment')) process.kill(process.pid, 'SIGKILL');
  send(res, 200, { reference, ...a.payment });
}

async function pay(kind: 'charge' | 'authorize', req: IncomingMessage, res: ServerResponse): Promise<void> {
  const b = await body(req);
  const [t, amount, currency, reference] = [b['token'], b['amount'], b['currency'], b['reference']].map(String) as [string, string, string, string];
  if (!/^\d{1,16}$/.test(amount) || !reference) return send(res, 400, { error: 'invalid_request' });
  answer(res, reference, book.pay(kind, reference, { token: t, amount, currency }));
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path.startsWith('/admin/')) return admin(req, res, path);
  if (take('down')) return void req.socket.destroy();
  if (token && req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'unauthorized' });
  if (req.method === 'POST' && path === '/charge') return pay('charge', req, res);
  if (req.method === 'POST' && path === '/authorize') return pay('authorize', req, res);
  if (req.method === 'POST' && path === '/capture') {
    const b = await body(req);
    const reference = String(b['reference']);
    if (take('refuse-capture')) return send(res, 422, { error: 'capture_refused' });
    return answer(res, reference, book.capture(reference, BigInt(String(b['amount']))));
  }
  const payment = /^\/payments\/([^/]+)$/.exec(path);
  if (req.method === 'GET' && payment) {
    const p = book.state.payments[decodeURIComponent(payment[1]!)];
    return send(res, p ? 200 : 404, p ? { reference: payment[1], ...p } : { error: 'no_such_payment' });
  }
  send(res, 404, { error: 'not found' });
}

async function admin(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  if (req.method === 'POST' && path === '/admin/wallets') {
    const t = `tok_${randomBytes(16).toString('hex')}`;
    book.fund(t, BigInt(String((await body(req))['amount'] ?? '0')));
    return send(res, 200, { token: t });
  }
  if (req.method === 'POST' && path === '/admin/faults') {
    const b = await body(req);
    const kind = (b['fault'] as { kind: Fault | 'none' }).kind;
    faults = kind === 'none' ? [] : [...faults.filter((f) => f.kind !== kind), { kind, times: Number(b['times'] ?? 1) }];
    return send(res, 200, faults);
  }
  if (req.method === 'GET' && path === '/admin/state') return send(res, 200, book.state);
  send(res, 404, { error: 'not found' });
}

serveStandIn('mpp sandbox', 4022, route);
