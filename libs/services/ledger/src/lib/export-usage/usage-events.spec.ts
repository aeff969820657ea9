/** The usage export's CloudEvents (G5.3): valid CloudEvents 1.0, one id per call, the settlement as time. */
import { HTTP } from 'cloudevents';
import { usageEvent, USAGE_EVENT_TYPE } from './usage-events';

const call = {
  intentId: '6f1c2b9a-1d3e-4f5a-8b7c-9d0e1f2a3b4c', settledAt: new Date('2026-12-07T10:00:00.000Z'), ownerId: 'owner-1', agentId: 'agent-1', toolName: 'summarize_text',
  operationKey: 'k-1', providerId: 'summaries', charge: { amountMinor: '13000', asset: 'USDC' }, rail: 'wallet' as const,
  usage: { unit: '100_chars', units: '13', unitPriceMinor: '1000', minimumMinor: '5000' },
};

describe('usageEvent', () => {
  it('is a valid CloudEvent whose id is the intentId and time the settlement; value the units charged', () => {
    const e = usageEvent(call, 'tollgate/ledger');
    expect(e.validate()).toBe(true);
    expect(JSON.parse(JSON.stringify(e))).toMatchObject({
      specversion: '1.0', id: call.intentId, type: USAGE_EVENT_TYPE, source: 'tollgate/ledger', time: '2026-12-07T10:00:00.000Z', subject: 'owner-1',
      data: { unit: '100_chars', value: '13', chargeMinor: '13000', asset: 'USDC', rail: 'wallet', operationKey: 'k-1' },
    });
    // A meter reading it as a structured CloudEvent gets the same event back.
    const message = HTTP.structured(e);
    expect(HTTP.toEvent({ headers: message.headers, body: message.body })).toMatchObject({ id: call.intentId, type: USAGE_EVENT_TYPE });
  });

  it('a fixed-price call counts one call; the same call exported twice is the same event', () => {
    const fixed = usageEvent({ ...call, usage: null, charge: { amountMinor: '250000', asset: 'USDC' } }, 's');
    expect(fixed.data).toMatchObject({ unit: 'call', value: '1', chargeMinor: '250000' });
    expect(JSON.stringify(usageEvent(call, 's'))).toBe(JSON.stringify(usageEvent(call, 's')));
  });
});
