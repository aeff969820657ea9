/**
 * A LISTEN connection comes back after the database refused connections for a while — retried with
 * back-off until it succeeds (never once), `isConnected()` true only while it listens, `onRestored` told so callers
 * catch up, notifications heard again. On a PostgreSQL server this test starts and stops itself.
 */
import { Client } from 'pg';
import { ChannelListener } from '@tollgate/persistence';
import { type OwnPostgres, startOwnPostgres, waitFor } from '@tollgate/testing';

jest.setTimeout(120_000);

describe('ChannelListener across a database outage', () => {
  let server: OwnPostgres;
  beforeAll(async () => {
    server = await startOwnPostgres();
  });
  afterAll(async () => server?.destroy());

  const notify = async (payload: string) => {
    const c = new Client({ connectionString: server.url('postgres') });
    await c.connect();
    await c.query(`SELECT pg_notify('test_channel', $1)`, [payload]);
    await c.end();
  };

  it('reconnects with back-off after 8 s of refused connections, says so throughout, and hears notifications again', async () => {
    const heard: string[] = [];
    let lost = 0;
    let restored = 0;
    const listener = new ChannelListener({
      databaseUrl: server.url('postgres'), channel: 'test_channel', applicationName: 'listener-test', retryMs: 100, maxRetryMs: 1_000,
      onNotification: (p) => heard.push(p), onLost: () => lost++, onRestored: () => restored++,
    });
    await listener.start();
    await notify('before');
    await waitFor('heard before', async () => heard.includes('before'), 5_000, 20);

    await server.stop();
    await waitFor('the loss noticed', async () => !listener.isConnected(), 10_000, 20);
    // Refused for 8 s: many reconnect tries fail meanwhile, and it stays honest about it.
    for (let i = 0; i < 16; i++) {
      await new Promise((r) => setTimeout(r, 500));
      expect(listener.isConnected()).toBe(false);
    }
    await server.start();
    await waitFor('reconnected', async () => listener.isConnected(), 10_000, 50);
    expect(lost).toBe(1);
    expect(restored).toBe(1);
    await notify('after');
    await waitFor('heard after', async () => heard.includes('after'), 5_000, 20);
    await listener.stop();
    expect(listener.isConnected()).toBe(false);
  });
});
