import { type EventDefinition } from '../event-definition';
import { CallCancelRequested } from './call-cancel-requested/call-cancel-requested.event';
import { CallDispatched } from './call-dispatched/call-dispatched.event';
import { CallProgressed } from './call-progressed/call-progressed.event';
import { CallRefunded } from './call-refunded/call-refunded.event';
import { CallRequested } from './call-requested/call-requested.event';
import { CallSettled } from './call-settled/call-settled.event';
import { CatalogToolChanged } from './catalog-tool-changed/catalog-tool-changed.event';
import { DeadLetterParked } from './dead-letter-parked/dead-letter-parked.event';
import { EffectConfirmed } from './effect-confirmed/effect-confirmed.event';
import { EffectRejected } from './effect-rejected/effect-rejected.event';
import { HoldReleased } from './hold-released/hold-released.event';
import { OutcomeUnknown } from './outcome-unknown/outcome-unknown.event';
import { PaymentHeld } from './payment-held/payment-held.event';
import { PaymentRejected } from './payment-rejected/payment-rejected.event';
import { PayoutIssued } from './payout-issued/payout-issued.event';
import { ResultReceived } from './result-received/result-received.event';
import { WalletChargedBack } from './wallet-charged-back/wallet-charged-back.event';
import { WalletFunded } from './wallet-funded/wallet-funded.event';

export * from './call-cancel-requested/call-cancel-requested.event';
export * from './call-dispatched/call-dispatched.event';
export * from './call-progressed/call-progressed.event';
export * from './call-refunded/call-refunded.event';
export * from './call-requested/call-requested.event';
export * from './call-settled/call-settled.event';
export * from './catalog-tool-changed/catalog-tool-changed.event';
export * from './dead-letter-parked/dead-letter-parked.event';
export * from './effect-confirmed/effect-confirmed.event';
export * from './effect-rejected/effect-rejected.event';
export * from './hold-released/hold-released.event';
export * from './outcome-unknown/outcome-unknown.event';
export * from './payment-held/payment-held.event';
export * from './payment-rejected/payment-rejected.event';
export * from './payout-issued/payout-issued.event';
export * from './result-received/result-received.event';
export * from './wallet-charged-back/wallet-charged-back.event';
export * from './wallet-funded/wallet-funded.event';

/**
 * The call life in order (ARCHITECTURE.md): exactly the facts of the call-life model, one list (a spec checks it
 * against the model's CALL_EVENT_TYPES and the workflow runner's CALL_EVENTS). Every event of one call shares its
 * intentId key.
 */
export const CallLifeEvents = [
  CallRequested,
  PaymentHeld,
  PaymentRejected,
  CallCancelRequested,
  CallDispatched,
  ResultReceived,
  OutcomeUnknown,
  EffectConfirmed,
  EffectRejected,
  CallSettled,
  CallRefunded,
] as const satisfies readonly EventDefinition<object>[];

/** Money that moves: payment's booking of a call's end (HoldReleased), deposits into wallets, payouts to providers. */
export const MoneyEvents = [HoldReleased, WalletFunded, WalletChargedBack, PayoutIssued] as const satisfies readonly EventDefinition<object>[];

/** What a call's timeline shows: its life, and the booking of its hold (every event that names one call). */
export const CallTimelineEvents = [...CallLifeEvents, HoldReleased] as const satisfies readonly EventDefinition<object>[];

/** Every event on the wire, the call-life facts and the rest (CallProgressed is a notice, not a fact). */
export const AllEvents: readonly EventDefinition<object>[] = [...CallLifeEvents, ...MoneyEvents, CatalogToolChanged, DeadLetterParked, CallProgressed];
