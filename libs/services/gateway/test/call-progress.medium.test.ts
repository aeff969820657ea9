/**
 * Medium tier (real PostgreSQL, its NOTIFY): a provider's progress notices, announced by whichever replica consumed
 * them (`CallWaiters.announceProgress`, sent at commit), reach the request that listens on another connection — in
 * order, and with the attempt's closing notice, which releases the answer (`ProgressStream.endOf`) without being
 * relayed to the agent itself.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { CallWaiters } from '../src/lib/call-tool/call-waiters.service';
import { ProgressStream } from '../src/lib/call-tool/progress-stream';
import { gatewayDataSourceOptions } from '../src/lib/gateway.datasource-options';
import { type GatewayOptions } from '../src/lib/gateway.options';

jest.setTimeout(60_000);

describe('progress notices over PostgreSQL NOTIFY (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let waiters: CallWaiters;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_gw_progress');
    ds = await openServiceDataSource(gatewayDataSourceOptions(db.url));
    waiters = new CallWaiters({ databaseUrl: db.url } as GatewayOptions);
    await waiters.onModuleInit();
  });
  afterAll(async () => {
    await waiters.onApplicationShutdown();
    await ds.destroy();
    await db.drop();
  });

  it('relays each notice of the call in order, and the closing notice releases the answer', async () => {
    const intentId = randomUUID();
    const heard: unknown[] = [];
    const stream = new ProgressStream((p) => heard.push(p));
    const unlisten = waiters.listenProgress(intentId, (n) => stream.hear(n));
    try {
      // Another call's notices are not this request's.
      await ds.transaction((m) => waiters.announceProgress(m, { intentId: randomUUID(), attempt: 1, progress: 7 }));
      const closed = stream.endOf(1, 60_000).then(() => 'closed');
      await ds.transaction(async (m) => {
        await waiters.announceProgress(m, { intentId, attempt: 1, progress: 0, total: 100, message: 'start' });
        await waiters.announceProgress(m, { intentId, attempt: 1, progress: 50, total: 100 });
      });
      await ds.transaction((m) => waiters.announceProgress(m, { intentId, attempt: 1, progress: 50, ended: true }));
      // Released by the closing notice itself, long before the bound given to endOf.
      expect(await Promise.race([closed, new Promise((r) => setTimeout(() => r('still waiting'), 10_000))])).toBe('closed');
      expect(heard).toEqual([{ progress: 0, total: 100, message: 'start' }, { progress: 50, total: 100 }]);
    } finally {
      unlisten();
    }
  });
});
