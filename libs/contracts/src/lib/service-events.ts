import { type EventDefinition } from './event-definition';
import {
  CallCancelRequested, CallDispatched, CallLifeEvents, CallProgressed, CallRefunded, CallRequested, CallSettled, CatalogToolChanged, DeadLetterParked, EffectConfirmed, EffectRejected,
  HoldReleased, MoneyEvents, OutcomeUnknown, PaymentHeld, PaymentRejected, PayoutIssued, ResultReceived, WalletChargedBack, WalletFunded,
} from './events';

type AnyEvent = EventDefinition<object>;
export interface ServiceEventDeclaration {
  readonly emits: readonly AnyEvent[];
  readonly consumes: readonly AnyEvent[];
}

/**
 * What each service emits and consumes, declared once. The messaging library enforces it — an
 * outbox refuses an event its service does not declare, a service's consumers may handle only declared events — and a
 * test checks the README's services table against it. Every service that consumes may also park a message
 * (DeadLetterParked).
 */
export const ServiceEvents = {
  gateway: {
    emits: [CallRequested, CallCancelRequested, DeadLetterParked],
    consumes: [CatalogToolChanged, CallDispatched, ResultReceived, EffectConfirmed, EffectRejected, PaymentHeld, PaymentRejected, OutcomeUnknown, CallSettled, CallRefunded, CallProgressed],
  },
  discovery: { emits: [CatalogToolChanged], consumes: [] },
  payment: {
    emits: [PaymentHeld, PaymentRejected, HoldReleased, WalletFunded, WalletChargedBack, DeadLetterParked],
    consumes: [CallRequested, CallSettled, CallRefunded],
  },
  execution: {
    emits: [CallDispatched, ResultReceived, OutcomeUnknown, EffectConfirmed, EffectRejected, CallProgressed, DeadLetterParked],
    consumes: [CatalogToolChanged, CallRequested, CallCancelRequested, PaymentHeld],
  },
  settlement: {
    emits: [CallSettled, CallRefunded, PayoutIssued, DeadLetterParked],
    consumes: [PaymentHeld, CallDispatched, EffectConfirmed, EffectRejected],
  },
  ledger: { emits: [DeadLetterParked], consumes: [...CallLifeEvents, ...MoneyEvents] },
} as const satisfies Record<string, ServiceEventDeclaration>;

export type ServiceName = keyof typeof ServiceEvents;

/** The declaration of a service, or undefined for a name that is not one (tests and tools with their own schemas). */
export function serviceEventsOf(service: string): ServiceEventDeclaration | undefined {
  return (ServiceEvents as Record<string, ServiceEventDeclaration>)[service];
}
