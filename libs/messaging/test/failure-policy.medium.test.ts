/**
 * R (a bad event is parked, a lost database is waited for): the failure classifier against errors raised by a real
 * PostgreSQL server and a real pg client, one per class it names — never errors built by hand. Each case first checks
 * the server really raised that SQLSTATE (or the client that condition), then how it is classified.
 */
import { Client } from 'pg';
import { createTestDatabase } from '@tollgate/testing';
import { failureKind } from '../src/lib/inbox/failure-policy';

jest.setTimeout(60_000);

let db: { url: string; drop(): Promise<void> };
const clients: Client[] = [];
const client = async (url = db.url) => {
  const c = new Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  clients.push(c);
  return c;
};
const raised = async (p: Promise<unknown>): Promise<Error & { code?: string }> => {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('the server raised nothing');
};

beforeAll(async () => {
  db = await createTestDatabase('tollgate_failkind');
  const c = await client();
  await c.query('CREATE TABLE t (id int PRIMARY KEY, v int CHECK (v >= 0))');
  await c.query('INSERT INTO t VALUES (1, 0), (2, 0)');
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  await db.drop();
});

describe('failureKind on real PostgreSQL errors (medium tier)', () => {
  it('57P01 admin shutdown of our session, then the lost connection itself: transient', async () => {
    const victim = await client();
    const pid = (await victim.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    await (await client()).query('SELECT pg_terminate_backend($1)', [pid]);
    // Which of the two the next query sees is a race: the server's 57P01 notice may be read before the query is sent
    // (then the client is already "not queryable"). Either way the failure is transient.
    const first = await raised(victim.query('SELECT 1'));
    expect(first.code ?? first.message).toMatch(/57P01|Connection terminated|not queryable/);
    expect(failureKind(first)).toBe('transient');
    const after = await raised(victim.query('SELECT 1'));
    expect(after.code ?? after.message).toMatch(/not queryable|Connection terminated|ECONNRESET|EPIPE/);
    expect(failureKind(after)).toBe('transient');
  });

  it('a refused connection (nothing listens): transient', async () => {
    const e = await raised(new Client({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' }).connect());
    expect((e as { code?: string }).code ?? (e as AggregateError).errors?.[0]?.code).toBe('ECONNREFUSED');
    expect(failureKind(e)).toBe('transient');
  });

  it('53300 too many connections: transient', async () => {
    const role = `failkind_${process.pid}`;
    const admin = await client();
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    // A password, so a server that authenticates by password (the PostgreSQL from npm) lets the role in as far as its limit.
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'failkind' CONNECTION LIMIT 0`);
    try {
      const e = await raised(client(db.url.replace(/\/\/[^@/]*@/, `//${role}:failkind@`)));
      expect(e.code).toBe('53300');
      expect(failureKind(e)).toBe('transient');
    } finally {
      await admin.query(`DROP ROLE ${role}`);
    }
  });

  it('40001 serialization failure (write skew under SERIALIZABLE): transient', async () => {
    const [a, b] = [await client(), await client()];
    for (const c of [a, b]) await c.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
    await a.query('SELECT sum(v) FROM t');
    await b.query('SELECT sum(v) FROM t');
    await a.query('UPDATE t SET v = v + 1 WHERE id = 1');
    await b.query('UPDATE t SET v = v + 1 WHERE id = 2');
    await a.query('COMMIT');
    const e = await raised(b.query('COMMIT'));
    expect(e.code).toBe('40001');
    expect(failureKind(e)).toBe('transient');
  });

  it('40P01 deadlock: transient', async () => {
    const [a, b] = [await client(), await client()];
    for (const c of [a, b]) await c.query("BEGIN; SET LOCAL deadlock_timeout = '50ms'");
    await a.query('UPDATE t SET v = v WHERE id = 1');
    await b.query('UPDATE t SET v = v WHERE id = 2');
    const first = a.query('UPDATE t SET v = v WHERE id = 2').then(() => undefined, (e: Error) => e);
    const second = b.query('UPDATE t SET v = v WHERE id = 1').then(() => undefined, (e: Error) => e);
    const e = ((await first) ?? (await second)) as Error & { code?: string };
    expect(e.code).toBe('40P01');
    expect(failureKind(e)).toBe('transient');
    await Promise.all([a.query('ROLLBACK'), b.query('ROLLBACK')]);
  });

  it.each([
    ['57014', 'statement timeout', "SET statement_timeout = '20ms'; SELECT pg_sleep(1)"],
    ['23505', 'unique violation', 'INSERT INTO t VALUES (1, 0)'],
    ['23514', 'check violation', 'UPDATE t SET v = -1 WHERE id = 1'],
    ['22003', 'numeric out of range', "SELECT '99999999999'::int"],
    ['22P02', 'invalid input', "SELECT 'x'::int"],
    ['P0001', 'raised by a function or trigger', "DO $$ BEGIN RAISE EXCEPTION 'no'; END $$"],
    ['42P01', 'undefined table', 'SELECT * FROM no_such_table'],
    ['22012', 'division by zero', 'SELECT 1 / 0'],
  ])('%s (%s) is the event\'s own: deterministic', async (code, _what, sql) => {
    const c = await client();
    const e = await raised(c.query(sql));
    expect(e.code).toBe(code);
    expect(failureKind(e)).toBe('deterministic');
  });

  it('55P03 lock not available and 25P02 a failed transaction: deterministic', async () => {
    const [a, b] = [await client(), await client()];
    await a.query('BEGIN');
    await a.query('SELECT * FROM t WHERE id = 1 FOR UPDATE');
    await b.query('BEGIN');
    const locked = await raised(b.query('SELECT * FROM t WHERE id = 1 FOR UPDATE NOWAIT'));
    expect(locked.code).toBe('55P03');
    expect(failureKind(locked)).toBe('deterministic');
    const aborted = await raised(b.query('SELECT 1'));
    expect(aborted.code).toBe('25P02');
    expect(failureKind(aborted)).toBe('deterministic');
    await Promise.all([a.query('ROLLBACK'), b.query('ROLLBACK')]);
  });
});
