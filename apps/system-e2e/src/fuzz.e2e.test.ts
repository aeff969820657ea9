/**
 * Issue 12 point 8: property-based fuzzing of the running embedded system. fast-check generates MCP JSON-RPC
 * messages, tool arguments, `_meta` (operation keys, x402 payloads), admin and finance requests and raw bodies
 * (`fuzz/fuzz-arbitraries.ts`); each is sent over HTTP, one at a time, and must get:
 * - no 5xx, no hang (20 s), and the process still alive and ready at the end;
 * - no internal text (stack frames, exception names, SQL or driver messages, file paths) in any answer;
 * - no state change when refused: a digest of every table that holds money or call state (identities, URLs,
 *   policies, prices, wallets, postings, deposits, holds, charges, spend counters, x402 nonces and attempts, calls and
 *   operation keys, verification windows, payouts, journal, timelines, the event archive, finance tokens, approvals)
 *   is the same before and after every refused request — where a refusal is itself recorded (a call payment refused:
 *   its call row, its rejected charge, its CallRequested/PaymentRejected facts), only those refusal records may appear.
 *   The digest is retaken only after some row of those tables was written (a row trigger counts writes: WATCH_SQL).
 * x402 is on, against the stand-in facilitator in its own process (issue 21 point 4).
 * FUZZ_CASES sets the number of cases (10,000 in CI; `npm run fuzz` runs 100,000), FUZZ_SEED replays a run.
 */
import os from 'node:os';
import fc from 'fast-check';
import { ServiceEvents } from '@tollgate/contracts';
import { Client as PgClient } from 'pg';
import { adminRequest, type FuzzRequest, jsonRpc, rawRequest, toolCall } from './fuzz/fuzz-arbitraries';
import { startTestFacilitator, type TestFacilitator } from '@tollgate/testing';
import { type EmbeddedSystem, postJson, startEmbeddedSystem } from './agent-client';

const CASES = Number(process.env['FUZZ_CASES'] ?? 10_000);
const SEED = Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31);
jest.setTimeout(Math.max(600_000, CASES * 60));

/** Text that must never reach a caller: exception names, stack frames, SQL/driver messages, paths, internals. */
const INTERNAL_TEXT = /(TypeError|RangeError|ReferenceError|SyntaxError|QueryFailedError|EntityNotFound|ZodError|\bat [\w.<>]+ \(|node_modules|\/work\/|\.ts:\d+|relation "|violates|duplicate key|invalid input syntax|out of range for type|pg_|ECONNREFUSED|ECONNRESET|Cannot read propert|undefined is not|is not a function|Unexpected token|invalid_type|invalid_union|unrecognized_keys|too_big|too_small)/;

/**
 * The state that holds money or call state, table by table (volatile bookkeeping — last-used stamps, leases, retry
 * times, counters of refused calls — left out). Rows a refusal itself records are left out by their state.
 */
const REFUSED_CALL = `(SELECT intent_id FROM gateway.call WHERE error->>'stage' = 'payment')`;
const STATE_SQL = `
  SELECT t, md5(coalesce(string_agg(r, '|' ORDER BY r), '')) AS digest FROM (
    SELECT 'gateway.owner' t, (to_jsonb(x))::text r FROM gateway.owner x UNION ALL
    SELECT 'gateway.agent', (to_jsonb(x) - 'last_used_at')::text FROM gateway.agent x UNION ALL
    SELECT 'gateway.credential', (to_jsonb(x) - 'last_used_at')::text FROM gateway.credential x UNION ALL
    SELECT 'gateway.mcp_url', (to_jsonb(x))::text FROM gateway.mcp_url x UNION ALL
    SELECT 'gateway.access_policy', (to_jsonb(x))::text FROM gateway.access_policy x UNION ALL
    SELECT 'gateway.owner_key', (to_jsonb(x))::text FROM gateway.owner_key x UNION ALL
    SELECT 'gateway.call', (to_jsonb(x) - 'updated_at')::text FROM gateway.call x WHERE x.intent_id NOT IN ${REFUSED_CALL} UNION ALL
    SELECT 'gateway.operation_key', (to_jsonb(x))::text FROM gateway.operation_key x WHERE x.intent_id NOT IN ${REFUSED_CALL} UNION ALL
    SELECT 'discovery.catalog_tool', (jsonb_build_object('id', x.tool_id, 'status', x.status, 'overrides', x.overrides))::text FROM discovery.catalog_tool x UNION ALL
    SELECT 'discovery.provider', (jsonb_build_object('id', x.provider_id, 'endpoint', x.endpoint))::text FROM discovery.provider x UNION ALL
    SELECT 'payment.balance', (to_jsonb(x))::text FROM payment.balance x UNION ALL
    SELECT 'payment.posting', (to_jsonb(x))::text FROM payment.posting x UNION ALL
    SELECT 'payment.deposit', (to_jsonb(x))::text FROM payment.deposit x UNION ALL
    SELECT 'payment.hold', (to_jsonb(x))::text FROM payment.hold x UNION ALL
    SELECT 'payment.charge', (to_jsonb(x))::text FROM payment.charge x WHERE x.outcome <> 'rejected' UNION ALL
    SELECT 'payment.spend_counter', (to_jsonb(x))::text FROM payment.spend_counter x UNION ALL
    SELECT 'payment.x402_nonce', (to_jsonb(x))::text FROM payment.x402_nonce x UNION ALL
    SELECT 'payment.x402_attempt', (to_jsonb(x) - 'tries' - 'next_try_at' - 'lease_until' - 'updated_at' - 'last_problem')::text FROM payment.x402_attempt x WHERE x.state <> 'refused' UNION ALL
    SELECT 'payment.spend_policy', (to_jsonb(x))::text FROM payment.spend_policy x UNION ALL
    SELECT 'payment.approval', (to_jsonb(x))::text FROM payment.approval x UNION ALL
    SELECT 'settlement.balance', (to_jsonb(x))::text FROM settlement.balance x UNION ALL
    SELECT 'settlement.verification', (to_jsonb(x))::text FROM settlement.verification x UNION ALL
    SELECT 'settlement.payout', (to_jsonb(x))::text FROM settlement.payout x UNION ALL
    SELECT 'ledger.journal_entry', (to_jsonb(x))::text FROM ledger.journal_entry x UNION ALL
    -- The projections, by the calls (and owners) they hold facts of: a refused request adds none; an earlier call's
    -- facts still arriving (the ledger batches) add no new one.
    SELECT DISTINCT 'ledger.timeline_entry', (x.intent_id)::text FROM ledger.timeline_entry x WHERE x.type NOT IN ('CallRequested', 'PaymentRejected') UNION ALL
    SELECT DISTINCT 'ledger.event_archive', x.key FROM ledger.event_archive x WHERE x.type NOT IN ('CallRequested', 'PaymentRejected') UNION ALL
    SELECT 'ledger.access_token', (to_jsonb(x) - 'last_used_at')::text FROM ledger.access_token x
  ) s GROUP BY t`;

/** Every table STATE_SQL digests. */
const WATCHED_TABLES = [...new Set([...STATE_SQL.matchAll(/FROM ([a-z0-9_]+\.[a-z0-9_]+) x\b/g)].map((m) => m[1]!))];

/**
 * A row trigger on each watched table bumps one sequence, so the digest is recomputed only when some row of them was
 * written since the last one: an unchanged mark (read before that digest was taken) proves an unchanged digest. The
 * digest reads every row of ~30 tables; most refused requests write nothing, and 10,000 of them paid for it each time.
 */
const WATCH_SQL = `
  CREATE SCHEMA IF NOT EXISTS fuzz_watch;
  CREATE SEQUENCE IF NOT EXISTS fuzz_watch.changes;
  CREATE OR REPLACE FUNCTION fuzz_watch.bump() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('fuzz_watch.changes'); RETURN NULL; END $$;
  ${WATCHED_TABLES.map((t) => `CREATE TRIGGER fuzz_watch_rows AFTER INSERT OR UPDATE OR DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION fuzz_watch.bump();
  CREATE TRIGGER fuzz_watch_truncate AFTER TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION fuzz_watch.bump();`).join('\n  ')}`;

interface Answer { status: number; text: string; ms: number; hung?: boolean }

/** The refusal code an answer carries (spec code, JSON-RPC code or HTTP status), for the report. */
const codeOf = (a: Answer): string => {
  try {
    const b = JSON.parse(a.text.replace(/^(event:[^\n]*\n)?data: /, '')) as { code?: string; error?: { code?: number; data?: { code?: string } }; result?: { _meta?: Record<string, { code?: string }> } };
    return b.result?._meta?.['assay/error']?.code ?? b.error?.data?.code ?? (b.error?.code !== undefined ? `jsonrpc ${b.error.code}` : undefined) ?? b.code ?? `http ${a.status}`;
  } catch {
    return `http ${a.status}`;
  }
};

const isRefusal = (a: Answer): boolean => {
  if (a.status >= 400) return true;
  try {
    const body = JSON.parse(a.text.startsWith('event:') || a.text.startsWith('data:') ? a.text.replace(/^[\s\S]*?data: /, '') : a.text) as { error?: unknown; result?: { isError?: boolean } };
    return body.error !== undefined || body.result?.isError === true;
  } catch {
    return false;
  }
};

describe(`fuzzing the running embedded system (issue 12 point 8): ${CASES} cases, seed ${SEED}`, () => {
  let system: EmbeddedSystem;
  let facilitator: TestFacilitator;
  let base: string;
  let admin: string;
  let pg: PgClient;
  const credentials: string[] = [];
  let victim: string;

  const digest = async (): Promise<Map<string, string>> => new Map(((await pg.query(STATE_SQL)).rows as { t: string; digest: string }[]).map((r) => [r.t, r.digest]));
  const mark = async (): Promise<string> => String((await pg.query("SELECT pg_sequence_last_value('fuzz_watch.changes')::text AS v")).rows[0].v);
  let known: { mark: string; state: Map<string, string> } | undefined;
  let digests = 0;
  /** The digest of every watched table: the last one while no watched row was written since (see WATCH_SQL). */
  const state = async (): Promise<Map<string, string>> => {
    const now = await mark();
    if (known?.mark === now) return known.state;
    digests++;
    known = { mark: now, state: await digest() };
    return known.state;
  };
  const changed = (a: Map<string, string>, b: Map<string, string>) => [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k));

  beforeAll(async () => {
    // x402 on, verified and settled by the stand-in facilitator in its own process.
    facilitator = await startTestFacilitator({ stateFile: `${os.tmpdir()}/tollgate-fuzz-facilitator-${process.pid}.json` });
    system = await startEmbeddedSystem('fuzz', {
      LOG_LEVEL: 'error', SETTLEMENT_VERIFICATION_WINDOW_MS: '200', PAYMENT_X402_FACILITATOR: facilitator.url, PAYMENT_X402_CHAIN_RPC: facilitator.rpcUrl, PAYMENT_X402_NETWORK: 'eip155:84532', PAYMENT_X402_PAY_TO: '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c',
    });
    admin = system.adminToken;
    base = system.base;
    pg = new PgClient({ connectionString: system.pgUrl });
    await pg.connect();
    await pg.query(WATCH_SQL);
    expect(WATCHED_TABLES.length).toBe(27); // every table STATE_SQL digests
    // A hundred agents of one owner with no money (the refused-calls rule counts per agent), a URL, a priced tool; a victim owner
    // for the admin requests.
    const ownerId = (await postJson(`${base}/admin/owners`, { name: 'Fuzz owner' }, admin)).json['ownerId'] as string;
    for (let i = 0; i < 100; i++) {
      const agentId = (await postJson(`${base}/admin/owners/${ownerId}/agents`, { name: `fuzz-${i}` }, admin)).json['agentId'] as string;
      credentials.push((await postJson(`${base}/admin/agents/${agentId}/credentials`, {}, admin)).json['credential'] as string);
    }
    expect((await postJson(`${base}/admin/mcp-urls`, { slug: 'fuzz', discoveryMode: 'search' }, admin)).status).toBe(201);
    victim = (await postJson(`${base}/admin/owners`, { name: 'Victim owner' }, admin)).json['ownerId'] as string;
    const priced = await fetch(`${base}/admin/tools/reverse_text`, { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, body: JSON.stringify({ priceMinor: '100', asset: 'USDC' }) });
    expect(priced.status).toBe(200);
    // The watch sees a write (here one that changes no value, so the state stays the same).
    const before = await mark();
    await pg.query('UPDATE gateway.owner SET name = name');
    expect(await mark()).not.toBe(before);
  });

  afterAll(async () => {
    await pg?.end();
    await system?.stop();
    await facilitator?.stop();
  });

  const authorization = (r: FuzzRequest, i: number): Record<string, string> =>
    ({ agent: { authorization: `Bearer ${credentials[i % credentials.length]}` }, admin: { authorization: `Bearer ${admin}` }, 'bare-admin': { authorization: admin },
      bogus: { authorization: 'Bearer tg_bogus0000000000000000000000000000' }, none: {} })[r.auth];

  const send = async (r: FuzzRequest, i: number): Promise<Answer> => {
    const t0 = Date.now();
    try {
      const res = await fetch(`${base}${r.path.replace('VICTIM', victim)}`, {
        method: r.method, signal: AbortSignal.timeout(20_000),
        headers: { ...authorization(r, i), ...(r.contentType ? { 'content-type': r.contentType } : {}), accept: 'application/json, text/event-stream' },
        ...(r.body !== undefined ? { body: r.body } : {}),
      });
      return { status: res.status, text: await res.text(), ms: Date.now() - t0 };
    } catch (err) {
      return { status: 0, text: String(err), ms: Date.now() - t0, hung: true };
    }
  };

  /**
   * No work in flight: every call answered and settled or refused, no hold pending, no verification window open, no
   * x402 attempt open, the ledger caught up — what an accepted call sets off goes on for a while after its answer.
   */
  const QUIET_SQL = `SELECT ((SELECT count(*) FROM gateway.call WHERE error IS NULL AND settlement IS NULL)
      + (SELECT count(*) FROM payment.hold WHERE status = 'pending')
      + (SELECT count(*) FROM payment.x402_attempt WHERE state IN ('verifying', 'settling'))
      + (SELECT count(*) FROM settlement.verification WHERE state = 'open')
      -- and the ledger has projected how each ended (it lingers to batch)
      + (SELECT count(*) FROM settlement.verification v WHERE v.state <> 'open'
           AND NOT EXISTS (SELECT 1 FROM ledger.timeline_entry t WHERE t.intent_id = v.intent_id AND t.type IN ('CallSettled', 'CallRefunded')))
      + (SELECT count(*) FROM payment.hold h WHERE h.status <> 'pending'
           AND NOT EXISTS (SELECT 1 FROM ledger.timeline_entry t WHERE t.intent_id = h.intent_id AND t.type = 'HoldReleased'))
      -- every event of a topic the ledger consumes is archived (applied)
      + (SELECT count(*) FROM eventlog.event e WHERE e.topic = ANY($1::text[])
           AND NOT EXISTS (SELECT 1 FROM ledger.event_archive a WHERE a.event_id = (e.value::jsonb->>'eventId')::uuid)))::int AS busy`;
  const LEDGER_TOPICS = ServiceEvents.ledger.consumes.map((e) => e.topic);
  const quiet = async () => Number((await pg.query(QUIET_SQL, [LEDGER_TOPICS])).rows[0].busy) === 0;

  /**
   * After a request that changed state, wait until what it set off (projections, events, settlement) has settled: no
   * work in flight (`quiet`) and the digest still the same a moment later. Polled every 25 ms (10 s at most): quiet
   * is the guard, and the ~200 accepted requests of a run each wait here.
   */
  let settleMs = 0;
  const settled = async (): Promise<Map<string, string>> => {
    const t0 = Date.now();
    try {
      return await settle();
    } finally {
      settleMs += Date.now() - t0;
    }
  };
  const settle = async (): Promise<Map<string, string>> => {
    let last = await state();
    for (let i = 0; i < 400; i++) {
      await new Promise((r) => setTimeout(r, 25));
      const now = await state();
      if (changed(last, now).length === 0 && (await quiet())) return now;
      last = now;
    }
    return last;
  };

  it('answers every case without a 5xx, a hang, internal text, or a state change from a refusal', async () => {
    const arbitrary = fc.oneof({ weight: 40, arbitrary: toolCall }, { weight: 25, arbitrary: jsonRpc }, { weight: 25, arbitrary: adminRequest }, { weight: 10, arbitrary: rawRequest });
    const cases = fc.sample(arbitrary, { numRuns: CASES, seed: SEED });
    const violations: { i: number; kind: string; request: string; answer: string }[] = [];
    const counts: Record<string, { cases: number; refused: number; accepted: number }> = {};
    const statuses: Record<string, number> = {};
    const codes: Record<string, number> = {};
    let before = await settled();
    const t0 = Date.now();
    for (const [i, r] of cases.entries()) {
      const a = await send(r, i);
      const refused = isRefusal(a);
      const c = (counts[r.family] ??= { cases: 0, refused: 0, accepted: 0 });
      c.cases++;
      c[refused ? 'refused' : 'accepted']++;
      statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      if (refused) codes[`${r.family}: ${codeOf(a)}`] = (codes[`${r.family}: ${codeOf(a)}`] ?? 0) + 1;
      const flag = (kind: string) => violations.push({ i, kind, request: JSON.stringify(r).slice(0, 400), answer: a.text.slice(0, 400) });
      if (a.hung) flag('hang or connection failure');
      else if (a.status >= 500) flag(`HTTP ${a.status}`);
      if (/"code":\s*-32603/.test(a.text)) flag('JSON-RPC -32603 internal error');
      if (INTERNAL_TEXT.test(a.text)) flag(`internal text: ${a.text.match(INTERNAL_TEXT)![0]}`);
      const after = await state();
      const diff = changed(before, after);
      if (refused && diff.length > 0) flag(`state changed by a refused request: ${diff.join(', ')}`);
      before = diff.length > 0 ? await settled() : after;
    }
    const ready = await fetch(`${base}/health/ready`);
    const report = { cases: cases.length, seed: SEED, seconds: Math.round((Date.now() - t0) / 1000), settleSeconds: Math.round(settleMs / 1000), digests, counts, statuses, codes, violations: violations.length };
    process.stdout.write(`\nfuzz report: ${JSON.stringify(report)}\n`);
    expect(violations.slice(0, 20)).toEqual([]);
    expect(cases.length).toBe(CASES);
    expect({ exitCode: system.process.child.exitCode, signal: system.process.child.signalCode }).toEqual({ exitCode: null, signal: null });
    expect(ready.status).toBe(200);
  });
});
