import { CallWaiters } from './call-waiters.service';
import { type GatewayOptions } from '../gateway.options';

const waiters = () => new CallWaiters({ databaseUrl: 'postgres://unused@127.0.0.1:1/none' } as GatewayOptions);

describe('CallWaiters: a stopping process answers its waiting calls at once', () => {
  it('wakes a waiter on its call\'s notification, not on another call\'s', async () => {
    const w = waiters();
    let woken = false;
    const waiting = w.next('call-a', 60_000).then(() => (woken = true));
    w.notify('call-b');
    await new Promise((r) => setImmediate(r));
    expect(woken).toBe(false);
    w.notify('call-a');
    await waiting;
    expect(woken).toBe(true);
  });

  it('before the HTTP server waits for its requests, wakes every waiter and lets no new wait last', async () => {
    const w = waiters();
    const waiting = [w.next('call-a', 60_000), w.next('call-b', 60_000)];
    expect(w.stopping).toBe(false);
    w.beforeApplicationShutdown();
    await Promise.all(waiting);
    await w.next('call-c', 60_000);
    // (Both awaits above would outlast the test's 5 s timeout if they waited for their 60 s.)
    expect(w.stopping).toBe(true);
  });
});
