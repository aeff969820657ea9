/**
 * The public readiness probe's figures cost the same whatever the history — open holds and open x402
 * attempts are counted from partial indexes, not by scanning every hold ever placed. Real PostgreSQL, payment's own
 * migrations, a history of 20,000 resolved holds.
 */
import { type DataSource } from 'typeorm';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { paymentDataSourceOptions } from '../src/lib/payment.datasource-options';
import { countOpenHolds, OPEN_HOLDS_SQL } from '../src/lib/resolve-hold/open-holds';

jest.setTimeout(60_000);

describe('readiness figures from indexes', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_payfig');
    ds = await openServiceDataSource(paymentDataSourceOptions(db.url));
    await ds.query(`INSERT INTO payment.hold (hold_id, intent_id, owner_id, amount_minor, asset, life, open)
                    SELECT gen_random_uuid(), gen_random_uuid(), 'o', 1, 'USDC', '{"attempts":{}}', i <= 3 FROM generate_series(1, 20000) AS i`);
    await ds.query('ANALYZE payment.hold');
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  it('counts the open holds right, through the hold_open partial index', async () => {
    expect(await countOpenHolds(ds)).toBe(3);
    const plan = JSON.stringify(await ds.query(`EXPLAIN (FORMAT JSON) ${OPEN_HOLDS_SQL}`));
    expect(plan).toContain('hold_open');
    expect(plan).not.toContain('"Seq Scan"');
  });

  it('counts open x402 attempts through their partial index (the index serves the query; the empty table is not a cost)', async () => {
    const plan = await ds.transaction(async (m) => {
      await m.query('SET LOCAL enable_seqscan = off');
      return JSON.stringify(await m.query(`EXPLAIN (FORMAT JSON) SELECT count(*) FROM payment.x402_attempt WHERE open`));
    });
    expect(plan).toContain('x402_attempt_open');
  });
});
