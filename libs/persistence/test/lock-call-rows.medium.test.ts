/**
 * Medium tier (real PostgreSQL): `lockCallRows`, the load step of every call-life handler, is one
 * statement that creates the rows of calls not seen yet, returns the rows already there unchanged, and holds them
 * until the transaction ends — a second transaction loading the same call waits, then sees what the first saved.
 */
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { col, defineTable, dropDatabase, ensureDatabase, lockCallRows, serviceDataSourceOptions } from '../src';

jest.setTimeout(60_000);

const CALL_STATE = defineTable('call_state', {
  intent_id: col.uuid().required(), life: col.jsonb<{ intentId: string; attempts: Record<string, unknown>; seen?: number }>().required(), note: col.text().nullable(),
});
const COLUMNS = ['intent_id', 'life', 'note'] as const;
const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

describe('lockCallRows (medium tier)', () => {
  let url: string;
  let ds: DataSource;

  beforeAll(async () => {
    // Its own database on the tests' server (libs/testing builds on this library, so it cannot be used here).
    const u = new URL(process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres');
    u.pathname = `/tollgate_lock_rows_${randomBytes(4).toString('hex')}`;
    url = u.toString();
    await ensureDatabase(url);
    ds = new DataSource(serviceDataSourceOptions({ name: 'lock-rows-test', schema: 'public', url, entities: [], migrations: [] }));
    await ds.initialize();
    await ds.query('CREATE TABLE call_state (intent_id uuid PRIMARY KEY, life jsonb NOT NULL, note text)');
  });
  afterAll(async () => {
    await ds.destroy();
    await dropDatabase(url);
  });

  it('creates the rows of calls not seen yet with an empty life, and returns existing rows unchanged (duplicates once)', async () => {
    await ds.query(`INSERT INTO call_state VALUES ($1, '{"intentId":"${A}","attempts":{},"seen":3}', 'kept')`, [A]);
    const rows = await ds.transaction((m) => lockCallRows(m, CALL_STATE, COLUMNS, [B, A, B]));
    expect([...rows.keys()].sort()).toEqual([A, B]);
    expect(rows.get(A)).toEqual({ intent_id: A, life: { intentId: A, attempts: {}, seen: 3 }, note: 'kept' });
    expect(rows.get(B)).toEqual({ intent_id: B, life: { intentId: B, attempts: {} }, note: null });
    expect(await ds.query('SELECT count(*)::int AS n FROM call_state')).toEqual([{ n: 2 }]);
  });

  it('holds the rows until commit: a concurrent load waits, then returns what the first transaction saved', async () => {
    let releaseFirst!: () => void;
    const firstMayCommit = new Promise<void>((r) => (releaseFirst = r));
    let firstLocked!: () => void;
    const locked = new Promise<void>((r) => (firstLocked = r));
    const first = ds.transaction(async (m) => {
      const rows = await lockCallRows(m, CALL_STATE, COLUMNS, [A]);
      firstLocked();
      await firstMayCommit;
      await m.query('UPDATE call_state SET note = $2 WHERE intent_id = $1', [A, `${rows.get(A)!.note}+first`]);
    });
    await locked;
    let secondDone = false;
    const second = ds.transaction(async (m) => {
      const rows = await lockCallRows(m, CALL_STATE, COLUMNS, [A]);
      secondDone = true;
      return rows.get(A)!.note;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(secondDone).toBe(false);
    releaseFirst();
    await first;
    expect(await second).toBe('kept+first');
  });
});
