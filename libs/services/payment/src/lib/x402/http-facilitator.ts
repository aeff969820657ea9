import { FacilitatorTimeoutError, HTTPFacilitatorClient } from '@x402/core/http';
import { type PaymentPayload, type PaymentRequirements, type SettleOutcome, type VerifyOutcome, type X402Facilitator } from './x402.types';

type CorePayload = Parameters<HTTPFacilitatorClient['settle']>[0];
type CoreRequirements = Parameters<HTTPFacilitatorClient['settle']>[1];

/**
 * A remote x402 facilitator, spoken to with the x402 project's own client (`@x402/core`: the facilitator HTTP API,
 * `POST /verify` and `POST /settle` with `{ x402Version, paymentPayload, paymentRequirements }`, its response schemas,
 * its timeout). It is the only kind that moves money on a chain, so it is the only kind production may use.
 *
 * Verify has no effect, so no answer is simply "unavailable". Settle is irreversible: only a verdict the facilitator
 * states (a 2xx settle response, or a 4xx refusal) counts; a timeout, a dropped connection, a 5xx or an answer that is
 * not a settle response is an unknown outcome, asked again later with the same payment identifier.
 */
export class HttpFacilitator implements X402Facilitator {
  readonly name: string;
  private readonly client: HTTPFacilitatorClient;
  /** The facilitator's `upto` signer per network, from `GET /supported` (asked until it answers, then kept). */
  private readonly upto = new Map<string, string>();
  /** The ask in flight per network, and when the last one failed (asked again at most every 5 s). */
  private readonly asking = new Map<string, Promise<string | undefined>>();
  private readonly failedAt = new Map<string, number>();

  constructor(baseUrl: string, timeoutMs: number, token?: string) {
    this.name = new URL(baseUrl).origin;
    const headers = token ? { Authorization: `Bearer ${token}` } : undefined;
    this.client = new HTTPFacilitatorClient({
      url: baseUrl, timeoutMs,
      ...(headers ? { createAuthHeaders: async () => ({ verify: headers, settle: headers, supported: headers }) } : {}),
    });
  }

  /**
   * The address the facilitator settles `upto` authorizations from (`/supported`'s kind for `upto` on the network, its
   * `extra.facilitatorAddress`): payers sign it into the authorization, and only it can settle it. Undefined while the
   * facilitator cannot be asked or offers no `upto` there (metered tools are then paid from the wallet only).
   * Without `wait` it answers from what is known and never waits on the facilitator — a consumer's transaction must
   * not hang on another party's HTTP — asking it in the background when nothing is known yet.
   */
  async uptoAddress(network: string, wait = false): Promise<string | undefined> {
    const known = this.upto.get(network);
    if (known) return known;
    const asked = this.asking.get(network) ?? this.ask(network);
    return wait ? asked : undefined;
  }

  private ask(network: string): Promise<string | undefined> {
    if (Date.now() - (this.failedAt.get(network) ?? 0) < 5_000) return Promise.resolve(undefined);
    const asked = this.client.getSupported().then((s) => {
      const kind = s.kinds.find((k) => k.scheme === 'upto' && k.network === network && k.x402Version === 2);
      const address = (kind?.extra as { facilitatorAddress?: unknown } | undefined)?.facilitatorAddress;
      return typeof address === 'string' && /^0x[0-9a-fA-F]{40}$/.test(address) ? address : undefined;
    }, () => undefined).then((address) => {
      this.asking.delete(network);
      if (address) this.upto.set(network, address);
      else this.failedAt.set(network, Date.now());
      return address;
    });
    this.asking.set(network, asked);
    return asked;
  }

  async verify(payment: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyOutcome> {
    try {
      const r = await this.client.verify(payment as unknown as CorePayload, requirements as unknown as CoreRequirements);
      if (r.isValid) return { kind: 'valid', ...(r.payer ? { payer: r.payer } : {}) };
      return { kind: 'invalid', reason: reasonText(r.invalidReason) };
    } catch (error) {
      const verdict = statedVerdict(error, 'isValid');
      if (verdict) return { kind: 'invalid', reason: reasonText(verdict.invalidReason) };
      return { kind: 'unavailable', problem: problemOf(error) };
    }
  }

  async settle(payment: PaymentPayload, requirements: PaymentRequirements): Promise<SettleOutcome> {
    try {
      const r = await this.client.settle(payment as unknown as CorePayload, requirements as unknown as CoreRequirements);
      if (!r.success) return { kind: 'refused', reason: reasonText(r.errorReason) };
      if (typeof r.transaction !== 'string' || r.transaction === '') return { kind: 'unknown', problem: 'the facilitator reported success without a transaction' };
      return { kind: 'settled', response: { success: true, transaction: r.transaction, network: requirements.network, ...(r.payer ? { payer: r.payer } : {}) } };
    } catch (error) {
      const verdict = statedVerdict(error, 'success');
      if (verdict) return { kind: 'refused', reason: reasonText(verdict.errorReason) };
      return { kind: 'unknown', problem: problemOf(error) };
    }
  }
}

/**
 * @x402/core's VerifyError / SettleError: a non-2xx answer whose body was a verdict. Only a 4xx one is the
 * facilitator's decision; a 5xx says it failed. (Matched by shape: each entry point of the package bundles its own copy
 * of the classes, so `instanceof` depends on the import path.)
 */
function statedVerdict(error: unknown, field: 'isValid' | 'success'): { invalidReason?: unknown; errorReason?: unknown } | undefined {
  const e = error as { name?: unknown; statusCode?: unknown; invalidReason?: unknown; errorReason?: unknown } | null;
  const name = field === 'isValid' ? 'VerifyError' : 'SettleError';
  return e?.name === name && typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500 ? e : undefined;
}

/** The facilitator's reason as a short machine word (its own codes pass through; anything else is "facilitator_refused"). */
function reasonText(reason: unknown): string {
  return typeof reason === 'string' && /^[a-z0-9_]{1,80}$/.test(reason) ? reason : 'facilitator_refused';
}

/** What went wrong, for the attempt's record and the logs: the URL's cause, never the payload. */
function problemOf(error: unknown): string {
  if (error instanceof FacilitatorTimeoutError) return `timed out after ${error.timeoutMs} ms (${error.operation})`;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const detail = cause && typeof cause.code === 'string' ? cause.code : cause && typeof cause.message === 'string' ? cause.message : '';
  return `${error instanceof Error ? error.message : String(error)}${detail ? ` (${detail})` : ''}`.slice(0, 500);
}
