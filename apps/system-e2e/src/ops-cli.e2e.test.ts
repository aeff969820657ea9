/**
 * Through the running embedded system, as an operator uses `tollgate-ops`: replay rebuilds the
 * ledger's projections from the archive and from the embedded log and verifies them equal to the live ones; a damaged
 * live projection is found row by row (exit 1) and repaired by a swap while the system keeps running; the
 * reconciliation report agrees across payment's book, settlement's book and the journal; inspect shows a call (by
 * intentId and by operation key), an archived event and consumer lag. Exit codes: 0 done, 1 "no", 2 could not run.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as Pg } from 'pg';
import { freePort, waitFor } from '@tollgate/testing';
import { callThrough, type EmbeddedSystem, errorOf, payingAgentOnEmbedded, postJson, receiptOf, runOpsCli, startEmbeddedSystem } from './agent-client';

jest.setTimeout(240_000);

const ops = (args: string[]) => runOpsCli('tollgate-ops', 'tools/ops/src/tollgate-ops.ts', args);
const jsonOf = (out: string) => JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)) as Record<string, unknown>;

describe('tollgate-ops: replay, reconcile, inspect', () => {
  let system: EmbeddedSystem;
  let base: string;
  let operator: string;
  let agent: Client;
  const intents: string[] = [];

  const sql = async <T>(text: string, params: unknown[] = []): Promise<T[]> => {
    const db = new Pg({ connectionString: system.pgUrl });
    await db.connect();
    try {
      return (await db.query(text, params)).rows as T[];
    } finally {
      await db.end();
    }
  };

  beforeAll(async () => {
    system = await startEmbeddedSystem('ops', { SETTLEMENT_VERIFICATION_WINDOW_MS: '200' });
    base = system.base;
    const admin = system.adminToken;
    ({ agent } = await payingAgentOnEmbedded(system, { slug: 'ops', priceMinor: '100', depositMinor: '5000' }));
    operator = (await postJson(`${base}/admin/finance-tokens`, { label: 'ops', role: 'operator' }, admin)).json['token'] as string;
    for (let i = 0; i < 5; i++) {
      const paid = (await callThrough(agent, 'reverse_text', { text: `abc${i}` }, `ops-key-${i}`)) as CallToolResult;
      expect(errorOf(paid)).toBeUndefined();
      intents.push(receiptOf(paid)!.intentId);
    }
    await waitFor('every call settled in the journal', async () =>
      Number((await sql<{ n: number }>(`SELECT count(DISTINCT posting_id)::int AS n FROM ledger.journal_entry WHERE kind = 'settle'`))[0]!.n) === 5, 60_000, 300);
  });

  afterAll(async () => {
    await agent?.close();
    await system?.stop();
  });

  it('replays from the archive and from the embedded log; both verify equal to the live projections', async () => {
    const fromArchive = await ops(['replay', '--database-url', system.pgUrl, '--verify', '--json']);
    expect(fromArchive.code).toBe(0);
    const a = jsonOf(fromArchive.out);
    expect(a).toMatchObject({ source: 'archive', projections: ['timelines', 'journal', 'balances'], differences: [] });
    expect(Number(a['events'])).toBeGreaterThanOrEqual(5 * 6);
    const fromLog = await ops(['replay', '--database-url', system.pgUrl, '--source', 'topics', '--brokers', 'embedded', '--verify', '--json']);
    expect(fromLog.code).toBe(0);
    expect(jsonOf(fromLog.out)).toMatchObject({ source: 'topics', refused: 0, differences: [] });
  });

  it('finds a damaged live projection row by row (exit 1), and a swap repairs it while the system runs', async () => {
    await sql(`DELETE FROM ledger.journal_entry WHERE posting_id = (SELECT posting_id FROM ledger.journal_entry WHERE kind = 'settle' ORDER BY posting_id LIMIT 1) AND seq = 0`);
    const found = await ops(['replay', '--database-url', system.pgUrl, '--verify', '--swap', '--json']);
    expect(found.code).toBe(1);
    const report = jsonOf(found.out);
    expect(report['swapped']).toBe(false);
    expect(report['differences']).toEqual(expect.arrayContaining([expect.objectContaining({ table: 'journal_entry', live: null, rebuilt: expect.any(Object) })]));
    // (The daily roll-up still counts the deleted entry — it is kept on insert — so the journal row is the difference.)
    // A plain --swap verifies first and refuses a rebuild that differs; the human output says what differs.
    const plain = await ops(['replay', '--database-url', system.pgUrl, '--swap', '--no-progress']);
    expect(plain.code).toBe(1);
    expect(plain.out).toMatch(/journal_entry \(.*\): missing from the live table/);
    expect(plain.out).toContain('not swapped: verify found differences');
    // Making it live anyway is one explicit, confirmed command.
    const swapped = await ops(['replay', '--database-url', system.pgUrl, '--swap', '--accept-differences', '--yes', '--json']);
    expect(swapped.code).toBe(0);
    expect(jsonOf(swapped.out)['swappedAtArchivePosition']).toEqual(expect.any(Number));
    // The system goes on projecting into the swapped tables.
    const more = (await callThrough(agent, 'reverse_text', { text: 'after swap' }, 'ops-key-after')) as CallToolResult;
    intents.push(receiptOf(more)!.intentId);
    await waitFor('the new call settled in the swapped journal', async () =>
      Number((await sql<{ n: number }>(`SELECT count(DISTINCT posting_id)::int AS n FROM ledger.journal_entry WHERE kind = 'settle'`))[0]!.n) === 6, 60_000, 300);
    const clean = await ops(['replay', '--database-url', system.pgUrl, '--verify', '--json', '--no-progress']);
    expect(clean.code).toBe(0);
    expect(jsonOf(clean.out)['differences']).toEqual([]);
  });

  it('one connection model: --embedded takes every URL, token and the database from demo.json', async () => {
    const report = await ops(['--embedded', '--data-dir', system.dataDir, 'reconcile', 'report', '--json']);
    expect(jsonOf(report.out)).toMatchObject({ accounts: { available: true } });
    const parked = await ops(['--embedded', '--data-dir', system.dataDir, 'parked', 'list']);
    expect(parked.code).toBe(0);
    expect(jsonOf(parked.out)).toMatchObject({ parked: expect.any(Array) });
    const replay = await ops(['--embedded', '--data-dir', system.dataDir, 'replay', '--verify', '--json', '--no-progress']);
    expect(jsonOf(replay.out)).toMatchObject({ differences: [] });
    // A service that is not there is named with its URL and the cause, not "fetch failed".
    const nobody = await freePort();
    const away = await ops(['reconcile', '--ledger-url', `http://127.0.0.1:${nobody}`, '--token', 'x', 'report']);
    expect(away.code).toBe(2);
    expect(away.out).toContain(`cannot reach http://127.0.0.1:${nobody}/reconciliation`);
    expect(away.out).toContain('ECONNREFUSED');
  });

  it('reconciles payment\'s book, settlement\'s book and the journal account by account', async () => {
    const r = await ops(['reconcile', '--ledger-url', base, '--token', operator, 'report', '--json']);
    const report = jsonOf(r.out) as { accounts: { lines: { account: string; status: string; journal: string }[]; mismatches: number; available: boolean } };
    expect(report.accounts.available).toBe(true);
    expect(report.accounts.lines.filter((l) => l.status !== 'matched')).toEqual([]);
    expect(report.accounts.lines.map((l) => l.account)).toEqual(expect.arrayContaining(['platform:revenue', 'platform:clearing']));
    expect(r.code).toBe(0);
    // A posting in payment's book the journal never got: both of its accounts show the difference, exit 1.
    await sql(`UPDATE payment.balance SET balance = balance + 7 WHERE account LIKE 'owner:%:available'`);
    const off = await ops(['reconcile', '--ledger-url', base, '--token', operator, 'report', '--json']);
    expect(off.code).toBe(1);
    expect((jsonOf(off.out) as typeof report).accounts.lines.filter((l) => l.status === 'mismatch')).toHaveLength(1);
    await sql(`UPDATE payment.balance SET balance = balance - 7 WHERE account LIKE 'owner:%:available'`);
  });

  it('exposes per-stage latency, consumer lag, outbox backlog, holds open and replay progress on /metrics (point 5)', async () => {
    const replay = jsonOf((await ops(['replay', '--database-url', system.pgUrl, '--json', '--no-progress'])).out);
    const metrics = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${system.demo['metricsToken']}` } })).text();
    const value = (pattern: RegExp) => Number(metrics.match(pattern)?.[1] ?? NaN);
    expect(value(/tollgate_event_age_seconds_count\{consumer="ledger\.timeline",type="CallSettled"\} (\d+)/)).toBeGreaterThanOrEqual(5);
    expect(value(/tollgate_event_handle_duration_seconds_count\{consumer="payment[^"]*",type="CallRequested"\} (\d+)/)).toBeGreaterThanOrEqual(5);
    expect(value(/tollgate_figure\{name="payment\.holdsOpen"\} (\d+)/)).toBe(0);
    expect(value(/tollgate_figure\{name="ledger\.replay\.events"\} (\d+)/)).toBe(replay['events']);
    expect(value(/tollgate_figure\{name="ledger\.outboxBacklog"\} (\d+)/)).toBe(0);
    expect(value(/tollgate_figure\{name="ledger\.consumerLag\.[^"]+"\} (\d+)/)).toBeGreaterThanOrEqual(0);
  });

  it('inspects a call by intentId and by operation key, an archived event, and consumer lag', async () => {
    const byId = await ops(['inspect', 'call', intents[0]!, '--ledger-url', base, '--token', operator]);
    expect(byId.code).toBe(0);
    expect(byId.out).toMatch(new RegExp(`call ${intents[0]}: settled`));
    expect(byId.out).toMatch(/CallRequested[\s\S]*PaymentHeld[\s\S]*CallSettled/);
    const byKey = await ops(['inspect', 'call', 'ops-key-2', '--ledger-url', base, '--token', operator, '--json']);
    expect(jsonOf(byKey.out)).toMatchObject({ intentId: intents[2], status: 'settled' });
    const [event] = await sql<{ event_id: string; position: number }>(`SELECT event_id, position::int FROM ledger.event_archive ORDER BY position LIMIT 1 OFFSET 3`);
    const shown = await ops(['inspect', 'event', event!.event_id, '--database-url', system.pgUrl, '--json']);
    expect(jsonOf(shown.out)).toMatchObject({ position: event!.position, envelope: { eventId: event!.event_id } });
    const lag = await ops(['inspect', 'lag', '--brokers', 'embedded', '--database-url', system.pgUrl, '--json']);
    expect(lag).toMatchObject({ code: 0 });
    expect((jsonOf(lag.out)['lag'] as { groupId: string }[]).map((l) => l.groupId)).toEqual(expect.arrayContaining([expect.stringMatching(/ledger/)]));
    expect((await ops(['inspect', 'event', 'not-an-id', '--database-url', system.pgUrl])).code).toBe(2);
    expect((await ops(['replay', '--source', 'nowhere'])).code).toBe(2);
  });
});
