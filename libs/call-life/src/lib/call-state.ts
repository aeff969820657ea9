import { type Amount, type CallEvent, type CallRequestedFact, type MeteredPrice, type PaymentRejectedFact, type UpstreamResult, type UsageReport } from './call-event';

/** What the model keeps of the request: its facts, without the arguments (kept by the services that need them). */
export type RequestFacts = Omit<CallRequestedFact, 'intentId' | 'x402Payment' | 'mppCredential'> & {
  /** The agent paid with a signed x402 payment. */
  x402?: boolean;
  /** The agent paid with an MPP credential. */
  mpp?: boolean;
};

export interface HoldFacts {
  holdId: string;
  ownerId: string;
  amount: Amount;
  /** One of the tool's daily free calls: nothing is held. */
  free: boolean;
  x402PaymentResponse?: Record<string, unknown>;
  /** The MPP receipt of the payment that funded the hold. */
  mppReceipt?: Record<string, unknown>;
  /** Priced by use: `amount` is the maximum (the services that never read the request learn it here). */
  metered?: MeteredPrice;
}

/** Payment's refusal, as PaymentRejected carries it (`final`: the refusal stands for the operation key, never run again). */
export type PaymentRefusal = Omit<PaymentRejectedFact, 'intentId'>;

/** What the provider answered, without the answer's body (each service keeps the body where it needs it). */
export interface ResultFacts {
  providerId: string;
  outcome: string;
  classification: string;
  resultDigest: string;
  isError: boolean;
  /** A metered call: the provider's report of what it used. */
  usage?: UsageReport;
}

/** The facts of one dispatch attempt, each recorded at most once. */
export interface AttemptFacts {
  dispatched?: { providerId: string; bindingId?: string; upstreamToolName?: string };
  result?: ResultFacts;
  unknown?: { providerId: string; reason: string; detail: string };
  /** `usage`: a metered call's usage, as confirmed with the effect (for the services that never read the result). */
  confirmed?: { method: string; providerId?: string; usage?: UsageReport };
  /** `requiredCapabilities`: the provider refused for want of client capabilities (-32021) — which ones. */
  rejected?: { code: string; reason: string; requiredCapabilities?: Record<string, unknown> };
}

export interface SettledFacts {
  holdId: string;
  providerId: string;
  amount: Amount;
  fee?: Amount;
  providerNet?: Amount;
}

export interface RefundedFacts {
  holdId: string;
  amount: Amount;
  reason: string;
}

/**
 * Everything known about one call, folded from its events. Plain JSON (services store it as `jsonb`): each fact has
 * one slot, filled once; the same fact delivered twice, or facts in any order, give the same state.
 */
export interface CallState {
  intentId: string;
  request?: RequestFacts;
  held?: HoldFacts;
  paymentRefused?: PaymentRefusal;
  /** The agent asked to cancel (a request: it takes effect only before dispatch, see isCancelDue). */
  cancelRequested?: { agentId: string; requestedAt: string };
  /** By attempt number (1, 2, … — one per provider tried). */
  attempts: Record<string, AttemptFacts>;
  settled?: SettledFacts;
  refunded?: RefundedFacts;
}

export function initialState(intentId: string): CallState {
  return { intentId, attempts: {} };
}

/** JSON with sorted keys: equal facts compare equal whatever order their fields were written in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Fills a slot. A slot already holding a different fact keeps the smaller of the two (canonical JSON): a join, so the
 * result does not depend on arrival order. Two different facts for one slot are reported by `contradictions`' callers
 * only as far as they matter (a duplicate redelivery is the same fact and changes nothing).
 */
function join<T>(current: T | undefined, next: T): T {
  if (current === undefined) return next;
  return canonical(next) < canonical(current) ? next : current;
}

function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function withAttempt(state: CallState, attempt: number, slot: keyof AttemptFacts, fact: NonNullable<AttemptFacts[keyof AttemptFacts]>): CallState {
  const key = String(attempt);
  const facts = state.attempts[key] ?? {};
  return { ...state, attempts: { ...state.attempts, [key]: { ...facts, [slot]: join(facts[slot] as object | undefined, defined(fact)) } } };
}

/** One event into the state: order- and duplicate-insensitive (property-tested). Events of other calls are ignored. */
export function evolve(state: CallState, event: CallEvent): CallState {
  if (event.payload.intentId !== state.intentId) return state;
  switch (event.type) {
    case 'CallRequested': {
      const p = event.payload;
      const request = defined<RequestFacts>({
        ownerId: p.ownerId, agentId: p.agentId, mcpUrlId: p.mcpUrlId, toolId: p.toolId, toolName: p.toolName, price: amountOf(p.price),
        operationKey: p.operationKey, deadlineAt: p.deadlineAt, freeCallsPerDay: p.freeCallsPerDay, x402: p.x402Payment !== undefined ? true : undefined,
        mpp: p.mppCredential !== undefined ? true : undefined, progress: p.progress === true ? true : undefined, metered: meteredOf(p.metered),
      });
      return { ...state, request: join(state.request, request) };
    }
    case 'PaymentHeld': {
      const p = event.payload;
      const held = defined<HoldFacts>({ holdId: p.holdId, ownerId: p.ownerId, amount: amountOf(p.amount), free: p.free === true, x402PaymentResponse: p.x402PaymentResponse, mppReceipt: p.mppReceipt, metered: meteredOf(p.metered) });
      return { ...state, held: join(state.held, held) };
    }
    case 'PaymentRejected': {
      const { intentId: _intentId, ...refusal } = event.payload;
      return { ...state, paymentRefused: join(state.paymentRefused, defined<PaymentRefusal>({ ...refusal, final: refusal.final === true ? true : undefined })) };
    }
    case 'CallCancelRequested': {
      const p = event.payload;
      return { ...state, cancelRequested: join(state.cancelRequested, { agentId: p.agentId, requestedAt: p.requestedAt }) };
    }
    case 'CallDispatched': {
      const p = event.payload;
      return withAttempt(state, p.attempt, 'dispatched', { providerId: p.providerId, bindingId: p.bindingId, upstreamToolName: p.upstreamToolName });
    }
    case 'ResultReceived': {
      const p = event.payload;
      return withAttempt(state, p.attempt, 'result', {
        providerId: p.providerId, outcome: p.outcome, classification: p.classification, resultDigest: p.resultDigest, isError: isErrorResult(p.result),
        usage: usageOf(p.usage),
      });
    }
    case 'OutcomeUnknown': {
      const p = event.payload;
      return withAttempt(state, p.attempt, 'unknown', { providerId: p.providerId, reason: p.reason, detail: p.detail });
    }
    case 'EffectConfirmed':
      return withAttempt(state, event.payload.attempt, 'confirmed', { method: event.payload.method, providerId: event.payload.providerId, usage: usageOf(event.payload.usage) });
    case 'EffectRejected':
      return withAttempt(state, event.payload.attempt, 'rejected', { code: event.payload.code, reason: event.payload.reason, requiredCapabilities: event.payload.requiredCapabilities });
    case 'CallSettled': {
      const p = event.payload;
      const settled = defined<SettledFacts>({ holdId: p.holdId, providerId: p.providerId, amount: amountOf(p.amount), fee: p.fee && amountOf(p.fee), providerNet: p.providerNet && amountOf(p.providerNet) });
      return { ...state, settled: join(state.settled, settled) };
    }
    case 'CallRefunded': {
      const p = event.payload;
      return { ...state, refunded: join(state.refunded, { holdId: p.holdId, amount: amountOf(p.amount), reason: p.reason }) };
    }
  }
}

/** Folds events into a state (a fresh one unless given). */
export function foldCall(intentId: string, events: Iterable<CallEvent>, from: CallState = initialState(intentId)): CallState {
  let state = from;
  for (const e of events) state = evolve(state, e);
  return state;
}

function meteredOf(m: MeteredPrice | undefined): MeteredPrice | undefined {
  return m && defined<MeteredPrice>({ unit: m.unit, unitPriceMinor: m.unitPriceMinor, minimumMinor: m.minimumMinor });
}

function usageOf(u: UsageReport | undefined): UsageReport | undefined {
  return u && defined<UsageReport>({ unit: u.unit, units: u.units, problem: u.problem });
}

function amountOf(a: Amount): Amount {
  return { amountMinor: a.amountMinor, asset: a.asset };
}

/** A projection may keep the event without its body: then the result counts as not an error. */
function isErrorResult(r: UpstreamResult | undefined): boolean {
  return r?.isError === true;
}
