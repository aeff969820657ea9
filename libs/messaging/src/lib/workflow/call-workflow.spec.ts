import { plainToInstance } from 'class-transformer';
import { CALL_EVENT_TYPES } from '@tollgate/call-life';
import { CallLifeEvents, EffectConfirmedPayload, HoldReleasedPayload } from '@tollgate/contracts';
import { CALL_EVENTS, callEventOf } from './call-events';
import { routeReads } from './call-workflow';

describe('the workflow runner wiring', () => {
  it('one list of call-life events: the model\'s, the contracts\' and the runner\'s are the same, in the same order', () => {
    expect(CallLifeEvents.map((e) => e.type)).toEqual([...CALL_EVENT_TYPES]);
    expect(Object.keys(CALL_EVENTS)).toEqual([...CALL_EVENT_TYPES]);
    expect(Object.values(CALL_EVENTS)).toEqual([...CallLifeEvents]);
  });

  it('subscribes a workflow to what the route says its decisions read', () => {
    expect(new Set(routeReads('settlement', ['isSettlementDue', 'isRefundDue']))).toEqual(new Set(['PaymentHeld', 'CallDispatched', 'EffectConfirmed', 'EffectRejected']));
    expect(new Set(routeReads('execution', ['readyToDispatch', 'isCancelDue']))).toEqual(new Set(['CallRequested', 'PaymentHeld', 'CallCancelRequested']));
  });

  it('refuses a decision the route does not have (a typo fails at boot, not silently)', () => {
    expect(() => routeReads('payment', ['isSettlementDue'])).toThrow(/no step isSettlementDue/);
  });

  it('types an entry only when it was decoded into its contract class', () => {
    const payload = { intentId: '6f1c2b9a-1d3e-4f5a-8b7c-9d0e1f2a3b4c', attempt: 1, method: 'output_contract' };
    expect(callEventOf('EffectConfirmed', plainToInstance(EffectConfirmedPayload, payload))).toEqual({ type: 'EffectConfirmed', payload: expect.objectContaining(payload) });
    expect(callEventOf('EffectConfirmed', payload)).toBeUndefined();
    expect(callEventOf('HoldReleased', plainToInstance(HoldReleasedPayload, payload))).toBeUndefined();
  });
});
