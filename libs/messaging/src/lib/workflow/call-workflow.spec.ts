import { plainToInstance } from 'class-transformer';
import { CALL_EVENT_TYPES, routeReads } from '@tollgate/call-life';
import { CallLifeEvents, CallRefunded, CallRequested, CallSettled, EffectConfirmedPayload, HoldReleased, HoldReleasedPayload } from '@tollgate/contracts';
import { type EventHandler } from '../inbox/handler';
import { assertRouteWiring } from '../nest/service-events-host';
import { CALL_EVENTS, callEventOf } from './call-events';

describe('the workflow runner wiring', () => {
  it('one list of call-life events: the model\'s, the contracts\' and the runner\'s are the same, in the same order', () => {
    expect(CallLifeEvents.map((e) => e.type)).toEqual([...CALL_EVENT_TYPES]);
    expect(Object.keys(CALL_EVENTS)).toEqual([...CALL_EVENT_TYPES]);
    expect(Object.values(CALL_EVENTS)).toEqual([...CallLifeEvents]);
  });

  it('subscribes a workflow to what the route\'s steps that name it read', () => {
    expect(new Set(routeReads('settlement'))).toEqual(new Set(['PaymentHeld', 'CallDispatched', 'EffectConfirmed', 'EffectRejected']));
    expect(new Set(routeReads('execution.calls'))).toEqual(new Set(['CallRequested', 'PaymentHeld', 'CallCancelRequested']));
  });

  it('refuses a consumer the route does not name (a typo fails at boot, not silently)', () => {
    expect(() => routeReads('settlements')).toThrow(/no step run by settlements/);
  });

  it('a service boots only wired as the route says: each routed consumer present, handling exactly its steps\' reads', () => {
    const handler = (event: EventHandler['event']): EventHandler => ({ event, handle: async () => undefined });
    const payment = (events: EventHandler['event'][]) => [{ name: 'payment', handlers: events.map(handler) }, { name: 'payment.holds', handlers: [handler(CallSettled), handler(CallRefunded)] }];
    expect(() => assertRouteWiring('payment', payment([CallRequested, HoldReleased]))).not.toThrow();
    expect(() => assertRouteWiring('payment', payment([CallRequested, CallSettled]))).toThrow(/payment handles CallRequested, CallSettled; the route has it read CallRequested/);
    expect(() => assertRouteWiring('payment', [{ name: 'payment', handlers: [handler(CallRequested)] }])).toThrow(/consumer payment.holds is missing/);
  });

  it('types an entry only when it was decoded into its contract class', () => {
    const payload = { intentId: '6f1c2b9a-1d3e-4f5a-8b7c-9d0e1f2a3b4c', attempt: 1, method: 'output_contract' };
    expect(callEventOf('EffectConfirmed', plainToInstance(EffectConfirmedPayload, payload))).toEqual({ type: 'EffectConfirmed', payload: expect.objectContaining(payload) });
    expect(callEventOf('EffectConfirmed', payload)).toBeUndefined();
    expect(callEventOf('HoldReleased', plainToInstance(HoldReleasedPayload, payload))).toBeUndefined();
  });
});
