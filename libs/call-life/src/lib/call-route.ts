import { type CallEventType } from './call-event';

export type CallService = 'gateway' | 'payment' | 'execution' | 'settlement' | 'ledger';

/** One step of a paid call's route: who acts, on which decision of the model, reading which facts, emitting which. */
export interface RouteStep {
  service: CallService;
  /** The call events the service folds into its own copy of the state for this step. */
  reads: readonly CallEventType[];
  /** The model's decision the step acts on (a function exported by this library), or the agent's request. */
  decision: string;
  emits: readonly CallEventType[];
  does: string;
  /**
   * The consumer that runs the step (its stable name): it is subscribed to exactly the union of its steps' `reads`, and
   * a service whose consumer handles other call events, or lacks one, refuses to boot. None for the agent's own requests.
   */
  consumer?: string;
  /**
   * Embedded mode: the reads applied inside the transaction that produced them (the step is on the agent's critical
   * path: its decision commits with the fact that caused it). Any failure leaves them to the ordinary delivery.
   */
  inline?: readonly CallEventType[];
  /** Reads that, alone, may wait up to `ROUTE_WAIT_MS` for more of the same calls (the fact the step acts on comes next). */
  waits?: readonly CallEventType[];
}

/** How long a read the route lets wait (`waits`) may wait for the next fact of its call. */
export const ROUTE_WAIT_MS = 100;

/**
 * The route of a call, written as data beside the model. A spec checks it against every service's emits/consumes
 * declaration, the README's route table is generated from it, and tests generate lives by walking it.
 */
export const CALL_ROUTE: readonly RouteStep[] = [
  { service: 'gateway', reads: [], decision: 'the agent calls a tool', emits: ['CallRequested'], does: 'checks the call (catalog, schema, policy, operation key) and records it' },
  { service: 'gateway', reads: [], decision: 'mayCancel (the agent cancels its task: tasks/cancel)', emits: ['CallCancelRequested'], does: 'records the request; a call already sent is refused with the reason' },
  { service: 'payment', reads: ['CallRequested'], decision: 'spend policy', emits: ['PaymentHeld', 'PaymentRejected'], does: 'holds the price (or a free call, or a settled x402 payment), or refuses', consumer: 'payment', inline: ['CallRequested'] },
  { service: 'execution', reads: ['CallRequested', 'PaymentHeld'], decision: 'readyToDispatch', emits: ['CallDispatched', 'ResultReceived', 'OutcomeUnknown', 'EffectConfirmed', 'EffectRejected'], does: 'dispatches to a provider (falling back to the next), checks the result, confirms or rejects the effect; reconciles an unknown outcome by operation key', consumer: 'execution.calls', inline: ['CallRequested', 'PaymentHeld'], waits: ['CallRequested'] },
  { service: 'execution', reads: ['CallCancelRequested'], decision: 'isCancelDue', emits: ['EffectRejected'], does: 'cancels a call not yet sent (CALL_CANCELLED; the hold is refunded); a cancel after dispatch changes nothing', consumer: 'execution.calls', inline: ['CallCancelRequested'] },
  { service: 'settlement', reads: ['PaymentHeld', 'CallDispatched', 'EffectConfirmed', 'EffectRejected'], decision: 'isSettlementDue', emits: ['CallSettled'], does: 'after the verification window, captures the hold and splits fee and provider payable (providerOf)', consumer: 'settlement' },
  { service: 'settlement', reads: ['PaymentHeld', 'EffectRejected'], decision: 'isRefundDue', emits: ['CallRefunded'], does: 'gives the hold back', consumer: 'settlement' },
  { service: 'payment', reads: ['CallSettled', 'CallRefunded'], decision: 'isTerminal', emits: [], does: 'books its half of the capture or the release', consumer: 'payment.holds' },
  { service: 'gateway', reads: ['PaymentHeld', 'PaymentRejected', 'CallDispatched', 'ResultReceived', 'OutcomeUnknown', 'EffectConfirmed', 'EffectRejected', 'CallSettled', 'CallRefunded'], decision: 'isAnswered, repeatVerdict, receiptOf', emits: [], does: 'answers the waiting agent and any retry under the same operation key', consumer: 'gateway.outcomes',
    inline: ['PaymentHeld', 'PaymentRejected', 'ResultReceived', 'OutcomeUnknown', 'EffectConfirmed', 'EffectRejected', 'CallRefunded'], waits: ['PaymentHeld', 'CallDispatched', 'CallSettled'] },
  { service: 'ledger', reads: ['CallRequested', 'PaymentHeld', 'PaymentRejected', 'CallCancelRequested', 'CallDispatched', 'ResultReceived', 'OutcomeUnknown', 'EffectConfirmed', 'EffectRejected', 'CallSettled', 'CallRefunded'], decision: 'status, contradictions', emits: [], does: 'keeps the timeline and the journal; reconciliation lists calls not terminal', consumer: 'ledger.timeline' },
];

/** The route as a Markdown table (the README's copy is checked against it). */
export function routeTable(route: readonly RouteStep[] = CALL_ROUTE): string {
  const list = (ts: readonly string[] | undefined) => (ts ?? []).map((t) => `\`${t}\``).join(', ');
  const embedded = (s: RouteStep) => [s.inline?.length ? `inline: ${list(s.inline)}` : '', s.waits?.length ? `waits: ${list(s.waits)}` : ''].filter(Boolean).join('; ') || '—';
  const rows = route.map((s) => `| ${s.service} | ${s.consumer ? `\`${s.consumer}\`` : '—'} | ${list(s.reads) || '—'} | ${s.decision} | ${list(s.emits) || '—'} | ${embedded(s)} | ${s.does} |`);
  return ['| service | consumer | reads | decision | emits | embedded delivery | does |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
}

/** How the route has a consumer's reads delivered in embedded mode: applied in the producer's transaction, and let wait. */
export function routeDelivery(consumer: string, route: readonly RouteStep[] = CALL_ROUTE): { inline: CallEventType[]; waits: CallEventType[] } {
  const steps = route.filter((s) => s.consumer === consumer);
  return { inline: [...new Set(steps.flatMap((s) => s.inline ?? []))], waits: [...new Set(steps.flatMap((s) => s.waits ?? []))] };
}

/** What the route subscribes a consumer to: the union of the `reads` of the steps it runs (it must run one). */
export function routeReads(consumer: string, route: readonly RouteStep[] = CALL_ROUTE): CallEventType[] {
  const steps = route.filter((s) => s.consumer === consumer);
  if (steps.length === 0) throw new Error(`the call route has no step run by ${consumer}`);
  return [...new Set(steps.flatMap((s) => s.reads))];
}
