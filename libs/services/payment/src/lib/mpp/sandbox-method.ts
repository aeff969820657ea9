import { SANDBOX_METHOD, sandboxMethods } from '@tollgate/contracts';
import { type BackendOutcome, type SandboxBackend } from './sandbox-backend';
import { mppxCore, mppxServer } from './mppx';

export { SANDBOX_METHOD };

type SandboxMethod = ReturnType<typeof sandboxMethods>['charge'] | ReturnType<typeof sandboxMethods>['authorize'];

/** The method's backend said nothing certain: the outcome is unknown (never a refusal), decided by its record later. */
export class SandboxOutcomeUnknown extends Error {
  constructor(readonly problem: string) {
    super(problem);
  }
}

export type SandboxMppx = ReturnType<typeof createSandboxMppx>;

/**
 * mppx's server for the sandbox method: challenges bound to `secretKey` and `realm`, credentials checked by mppx
 * (binding, expiry, realm, the route's amount) before `validate` (the payload's shape, no money) and `broadcast` (the
 * backend charges or authorizes, by the challenge id as its reference). A stated refusal is mppx's
 * VerificationFailedError; no answer is `SandboxOutcomeUnknown`.
 */
export function createSandboxMppx(backend: SandboxBackend, o: { secretKey: string; realm: string }) {
  const { Method } = mppxCore();
  const { Mppx, Transport } = mppxServer();
  const methods = sandboxMethods();
  const serve = <M extends SandboxMethod>(method: M) => Method.toServer(method as ReturnType<typeof sandboxMethods>['charge'], {
    validate: async ({ credential: c, request: r }) => ({ challenge: c.challenge, credential: c, details: {}, intent: method.intent, method: method.name, request: r }) as never,
    broadcast: async ({ credential: c, request: r }) => receiptOf(await backend.pay(method.intent as 'charge' | 'authorize', c.challenge.id, { token: c.payload.token, amount: r.amount, currency: r.currency })),
  });
  return Mppx.create({ methods: [serve(methods.charge), serve(methods.authorize)], realm: o.realm, secretKey: o.secretKey, transport: Transport.mcp() });
}

function receiptOf(o: BackendOutcome) {
  if (o.kind === 'unknown') throw new SandboxOutcomeUnknown(o.problem);
  if (o.kind === 'refused') throw new (mppxCore().Errors.VerificationFailedError)({ reason: o.reason });
  return { method: SANDBOX_METHOD, reference: o.payment.reference, status: 'success' as const, timestamp: o.payment.at };
}
