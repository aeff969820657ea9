/**
 * R (outages noticed and survived): a LISTEN connection left half-open by a network drop is noticed. The connection
 * runs through a TCP relay in this test that, when "dropped", stops carrying bytes in both directions without closing
 * either side (what a lost route or a dropped packet stream leaves behind). The listener must report the loss within
 * its probe bound, and be listening again within 5 s of the network returning, with notifications delivered.
 */
import net from 'node:net';
import { Client } from 'pg';
import { ChannelListener } from '../src';

// Not from @tollgate/testing: it depends on this library.
const TEST_POSTGRES_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
async function waitFor(what: string, probe: () => boolean | Promise<boolean>, timeoutMs: number, everyMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await probe());) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

jest.setTimeout(60_000);

/** A relay to PostgreSQL whose traffic can be silently dropped and restored. */
function silentRelay(target: URL) {
  let dropped = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.on('data', (d) => { if (!dropped) upstream.write(d); });
    upstream.on('data', (d) => { if (!dropped) client.write(d); });
  });
  return {
    listen: () => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port))),
    drop: () => { dropped = true; },
    restore: () => {
      dropped = false;
      // Connections that lived through the drop lost bytes: as after a real outage, they are dead to both ends.
      for (const s of sockets) s.destroy();
    },
    close: () => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); }),
  };
}

describe('a half-open LISTEN connection is noticed (medium tier)', () => {
  it('reports the loss within its probe bound and listens again within 5 s of the network returning', async () => {
    const target = new URL(TEST_POSTGRES_URL);
    const relay = silentRelay(target);
    const port = await relay.listen();
    const via = new URL(TEST_POSTGRES_URL);
    via.port = String(port);
    const events: string[] = [];
    const listener = new ChannelListener({
      databaseUrl: via.toString(), channel: 'tollgate_half_open_test', applicationName: 'half-open-test', heartbeatMs: 500, heartbeatTimeoutMs: 1_000,
      onNotification: (payload) => events.push(`notified:${payload}`), onLost: () => events.push('lost'), onRestored: () => events.push('restored'),
      retryMs: 100, maxRetryMs: 500,
    });
    await listener.start();
    const notifier = new Client({ connectionString: TEST_POSTGRES_URL });
    await notifier.connect();
    try {
      await notifier.query(`NOTIFY tollgate_half_open_test, 'before'`);
      await waitFor('the notification before the drop', () => events.includes('notified:before'), 5_000, 20);
      const dropped = Date.now();
      relay.drop();
      await waitFor('the loss noticed', () => events.includes('lost'), 10_000, 20);
      expect(Date.now() - dropped).toBeLessThan(1_500 + 1_000);
      expect(listener.isConnected()).toBe(false);
      const back = Date.now();
      relay.restore();
      await waitFor('listening again', () => events.includes('restored') && listener.isConnected(), 10_000, 20);
      expect(Date.now() - back).toBeLessThan(5_000);
      await notifier.query(`NOTIFY tollgate_half_open_test, 'after'`);
      await waitFor('the notification after the return', () => events.includes('notified:after'), 5_000, 20);
    } finally {
      await notifier.end();
      await listener.stop();
      await relay.close();
    }
  });
});
