import { CallDispatched, CallRefunded, CallSettled, EffectConfirmed, EffectRejected, OutcomeUnknown, PaymentHeld, PaymentRejected, ResultReceived } from '@tollgate/contracts';

/** The gateway's consumer of the other services' facts about calls. */
export const OUTCOMES_CONSUMER = 'gateway.outcomes';

/** The events of other services that the gateway folds into its calls' states. */
export const OUTCOME_EVENTS = [CallDispatched, ResultReceived, EffectConfirmed, EffectRejected, PaymentHeld, PaymentRejected, OutcomeUnknown, CallSettled, CallRefunded];

/**
 * Facts that never answer a call: alone they may wait for the ones that do, so a paid call's hold, dispatch and
 * result are folded in one transaction instead of three.
 */
export const NEVER_ANSWERING = [PaymentHeld, CallDispatched, CallSettled];

/**
 * The topics whose events may answer a waiting agent. When the gateway parks one of them for a call, the agent's
 * answer cannot come from the model any more: it is told the outcome is held for review (see `outcome_parked`).
 */
export const ANSWERING_TOPICS: readonly string[] = OUTCOME_EVENTS.map((e) => e.topic)
  .filter((topic) => !NEVER_ANSWERING.some((e) => e.topic === topic));
