import { routeDelivery } from '@tollgate/call-life';
import { PaymentHeld } from '@tollgate/contracts';
import { CALL_EVENTS } from '@tollgate/messaging';
import { ANSWERING_TOPICS, NEVER_ANSWERING } from './outcome-events';

describe('the route delivers the gateway\'s outcomes as the answer needs (embedded mode)', () => {
  it('inline: the hold and exactly the facts that may answer; waiting: exactly those that never answer', () => {
    const { inline, waits } = routeDelivery('gateway.outcomes');
    expect(inline.map((t) => CALL_EVENTS[t].topic).sort()).toEqual([PaymentHeld.topic, ...ANSWERING_TOPICS].sort());
    expect(waits.map((t) => CALL_EVENTS[t].topic).sort()).toEqual(NEVER_ANSWERING.map((e) => e.topic).sort());
  });
});
