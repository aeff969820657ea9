/**
 * Medium tier (real PostgreSQL with execution's migrations): the stall claim (the reconciler's due work) stays cheap as calls pass through.
 * Every paid call moves its `pending_call` row into the partial index `pending_call_in_flight` and out again; the
 * sweep reads the index in deadline order (an index scan, which marks the entries of rows that left it dead), oldest
 * first and bounded, and the table is vacuumed after a fixed number of dead rows rather than a fifth of the table.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { executionDataSourceOptions } from '../src/lib/execution.datasource-options';
import { STALL_SWEEP_BATCH } from '../src/lib/reconcile-calls/reconcile-calls.usecase';
import { Reconciliations, STALLED } from '../src/lib/dispatch-call/reconciliations.repository';

jest.setTimeout(120_000);

describe('the stall sweep (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_exec_sweep');
    ds = await openServiceDataSource(executionDataSourceOptions(db.url));
  });
  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  /** Calls whose deadline passed `ageS` seconds ago (one per entry), in flight or not. */
  const calls = async (rows: { ageS: number; inFlight: boolean }[]) => {
    const ids = rows.map(() => randomUUID());
    await ds.query(
      `INSERT INTO execution.pending_call (intent_id, life, deadline_at, in_flight_attempt)
       SELECT id, jsonb_build_object('intentId', id, 'attempts', '{}'::jsonb), now() - make_interval(secs => age), CASE WHEN f THEN 1 END
         FROM unnest($1::uuid[], $2::int[], $3::boolean[]) AS t(id, age, f)`,
      [ids, rows.map((r) => r.ageS), rows.map((r) => r.inFlight)]);
    return ids;
  };

  it('reports attempts in flight past the grace, oldest first, at most the batch; none that left the index', async () => {
    const [old, older, fresh, done] = await calls([{ ageS: 60, inFlight: true }, { ageS: 120, inFlight: true }, { ageS: 1, inFlight: true }, { ageS: 300, inFlight: false }]);
    // Thousands of calls passed through the index and left it (their attempts answered).
    const passed = await calls(Array.from({ length: 5000 }, () => ({ ageS: 600, inFlight: true })));
    await ds.query('UPDATE execution.pending_call SET in_flight_attempt = NULL WHERE intent_id = ANY($1::uuid[])', [passed]);
    expect((await Reconciliations.claimStalled(ds, 5, 10)).map((r) => r.intent_id)).toEqual([older, old]);
    expect((await Reconciliations.claimStalled(ds, 5, 1)).map((r) => r.intent_id)).toEqual([older]);
    expect((await Reconciliations.claimStalled(ds, 5, 10)).map((r) => r.intent_id)).not.toContain(fresh);
    expect((await Reconciliations.claimStalled(ds, 5, 10)).map((r) => r.intent_id)).not.toContain(done);
  });

  it('reads the partial index in order, not as a bitmap, and the table is vacuumed after a fixed number of dead rows', async () => {
    await ds.query('ANALYZE execution.pending_call');
    const plan = (await ds.query(`EXPLAIN (FORMAT JSON) ${STALLED}`, [5, STALL_SWEEP_BATCH])) as { 'QUERY PLAN': unknown }[];
    const text = JSON.stringify(plan[0]!['QUERY PLAN']);
    expect(text).toContain('"Index Name":"pending_call_in_flight"');
    expect(text).not.toContain('Bitmap');
    const [options] = (await ds.query(`SELECT reloptions FROM pg_class WHERE oid = 'execution.pending_call'::regclass`)) as { reloptions: string[] }[];
    expect(options!.reloptions).toEqual(expect.arrayContaining(['autovacuum_vacuum_scale_factor=0', 'autovacuum_vacuum_threshold=5000']));
  });
});
