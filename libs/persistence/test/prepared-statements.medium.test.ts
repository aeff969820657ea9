/**
 * Medium tier (real PostgreSQL): every service's pool prepares a parameterised statement once per connection and then
 * only binds and executes it (the server's parse and plan were most of a short statement's cost),
 * through TypeORM as the repositories call it — results and errors unchanged.
 */
import { randomBytes } from 'node:crypto';
import { DataSource, QueryFailedError } from 'typeorm';
import { dropDatabase, ensureDatabase, PLAN_EACH_RUN, returnedRows, serviceDataSourceOptions } from '../src';

jest.setTimeout(60_000);

describe('prepared statements through TypeORM (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;

  beforeAll(async () => {
    // Its own database on the tests' server (libs/testing builds on this library, so it cannot be used here).
    const url = new URL(process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres');
    url.pathname = `/tollgate_prepared_${randomBytes(4).toString('hex')}`;
    await ensureDatabase(url.toString());
    db = { url: url.toString(), drop: () => dropDatabase(url.toString()) };
    ds = new DataSource(serviceDataSourceOptions({ name: 'prepared-test', schema: 'public', url: db.url, entities: [], migrations: [] }));
    await ds.initialize();
    await ds.query('CREATE TABLE item (id int PRIMARY KEY, label text NOT NULL)');
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  it('a parameterised statement is prepared once on its connection and answers as before; one without parameters is not', async () => {
    const runner = ds.createQueryRunner();
    try {
      const insert = 'INSERT INTO item (id, label) VALUES ($1, $2) RETURNING id, label';
      expect(await runner.query(insert, [1, 'one'])).toEqual([{ id: 1, label: 'one' }]);
      expect(await runner.query(insert, [2, 'two'])).toEqual([{ id: 2, label: 'two' }]);
      // UPDATE ... RETURNING keeps TypeORM's [rows, count] shape.
      expect(returnedRows(await runner.query('UPDATE item SET label = $2 WHERE id = $1 RETURNING label', [2, 'deux']))).toEqual([{ label: 'deux' }]);
      await runner.query('SELECT count(*) FROM item');
      const prepared = (await runner.query('SELECT statement FROM pg_prepared_statements ORDER BY prepare_time')) as { statement: string }[];
      expect(prepared.map((p) => p.statement)).toEqual([insert, 'UPDATE item SET label = $2 WHERE id = $1 RETURNING label']);
    } finally {
      await runner.release();
    }
  });

  it('a statement led by PLAN_EACH_RUN is never prepared: planned with its values on every run, never a generic plan', async () => {
    const runner = ds.createQueryRunner();
    try {
      const byIds = 'SELECT count(*)::int AS n FROM item WHERE id = ANY($1::int[])';
      // Six runs: from the sixth on, PostgreSQL may keep a generic plan for the prepared one — made for the table as it is now.
      for (let i = 0; i < 6; i++) {
        expect(await runner.query(byIds, [[1, 2]])).toEqual([{ n: 2 }]);
        expect(await runner.query(`${PLAN_EACH_RUN}${byIds}`, [[1, 2]])).toEqual([{ n: 2 }]);
      }
      const prepared = (await runner.query('SELECT statement, generic_plans + custom_plans AS runs FROM pg_prepared_statements WHERE statement LIKE $1', ['%ANY($1::int[])%'])) as { statement: string; runs: string }[];
      expect(prepared).toEqual([{ statement: byIds, runs: '6' }]);
    } finally {
      await runner.release();
    }
  });

  it('a connection is replaced after its lifetime, and with it the plans cached for its statements', async () => {
    const short = new DataSource(serviceDataSourceOptions({ name: 'prepared-lifetime', schema: 'public', url: db.url, entities: [], migrations: [], poolSize: 1, connectionLifetimeS: 1 }));
    await short.initialize();
    try {
      const whoRuns = 'SELECT pg_backend_pid() AS pid, (SELECT count(*)::int FROM item WHERE id = $1) AS n';
      const runsHere = async () => ((await short.query('SELECT generic_plans + custom_plans AS runs FROM pg_prepared_statements WHERE statement = $1', [whoRuns])) as { runs: string }[])[0]?.runs;
      const [first] = (await short.query(whoRuns, [1])) as { pid: number }[];
      await short.query(whoRuns, [1]);
      expect(await runsHere()).toBe('2');
      await new Promise((r) => setTimeout(r, 1_500));
      const [later] = (await short.query(whoRuns, [1])) as { pid: number }[];
      expect(later!.pid).not.toBe(first!.pid);
      expect(await runsHere()).toBe('1'); // prepared afresh on the new connection, planned for the table as it is now
    } finally {
      await short.destroy();
    }
  });

  it('errors still reach callers as TypeORM QueryFailedError with the driver error', async () => {
    const failed = ds.query('INSERT INTO item (id, label) VALUES ($1, $2)', [1, 'again']);
    await expect(failed).rejects.toBeInstanceOf(QueryFailedError);
    await expect(failed).rejects.toMatchObject({ driverError: { code: '23505' } });
  });
});
