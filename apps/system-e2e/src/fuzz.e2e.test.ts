/**
 * Property-based fuzzing of the running embedded system. fast-check generates MCP JSON-RPC
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
 * x402 is on, against the stand-in facilitator in its own process.
 * FUZZ_CASES sets the number of cases (10,000 in CI; `npm run fuzz` runs 100,000), FUZZ_SEED replays a run.
 */
import os from 'node:os';
import fc from 'fast-check';
import { ServiceEvents } from '@tollgate/contracts';
import { Client as PgClient } from 'pg';
import { adminRequest, type FuzzRequest, jsonRpc, mppCall, rawRequest, toolCall, x402Call } from './fuzz/fuzz-arbitraries';
import { type ExactRequirement, startTestFacilitator, startTestMppSandbox, type TestFacilitator, type TestMppSandbox, testPayer, waitFor } from '@tollgate/testing';
import { type EmbeddedSystem, postJson, startEmbeddedSystem } from './agent-client';

const CASES = Number(process.env['FUZZ_CASES'] ?? 10_000);
const SEED = Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31);
jest.setTimeout(Math.max(600_000, CASES * 60));

/**
 * Text that must never reach a caller: exception names, stack frames, SQL/driver messages, paths, internals. `pg_` only
 * where a word starts: a random id (an MPP challenge's, base64url) holds those three letters about once in 6,000.
 */
const INTERNAL_TEXT = /(TypeError|RangeError|ReferenceError|SyntaxError|QueryFailedError|EntityNotFound|ZodError|\bat [\w.<>]+ \(|node_modules|\/work\/|\.ts:\d+|relation "|violates|duplicate key|invalid input syntax|out of range for type|(?<![A-Za-z0-9_-])pg_[a-z]|ECONNREFUSED|ECONNRESET|Cannot read propert|undefined is not|is not a function|Unexpected token|invalid_type|invalid_union|unrecognized_keys|too_big|too_small)/;

/**
 * The state that holds money or call state, table by table (volatile bookkeeping — last-used stamps, leases, retry
 * times, counters of refused calls — left out). Rows a refusal itself records are left out by their state.
 */
const REFUSED_CALL = `(SELECT intent_id FROM gateway.call WHERE life ? 'paymentRefused')`;
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
    SELECT 'payment.x402_attempt', ((to_jsonb(x) - 'tries' - 'next_try_at' - 'lease_until' - 'updated_at' - 'life')
      || jsonb_build_object('step', x.life->'step', 'transaction', x.life->'transaction', 'scheme', x.life->'scheme', 'charge', x.life->'chargeMinor'))::text FROM payment.x402_attempt x WHERE x.life->>'step' <> 'refused' UNION ALL
    SELECT 'payment.mpp_replay', (to_jsonb(x) - 'created_at')::text FROM payment.mpp_replay x UNION ALL
    SELECT 'payment.spend_policy', (to_jsonb(x))::text FROM payment.spend_policy x UNION ALL
    SELECT 'payment.approval', (to_jsonb(x))::text FROM payment.approval x UNION ALL
    SELECT 'settlement.balance', (to_jsonb(x))::text FROM settlement.balance x UNION ALL
    SELECT 'settlement.verification', (to_jsonb(x))::text FROM settlement.verification x UNION ALL
    SELECT 'settlement.payout', (to_jsonb(x))::text FROM settlement.payout x UNION ALL
    SELECT 'ledger.journal_entry', (to_jsonb(x))::text FROM ledger.journal_entry x UNION ALL
    -- The projections, one entry per event: a refused request may add only its own call's refusal facts.
    -- (an archived event by its id and its chained hash, which covers its text; a timeline entry by its event and call)
    SELECT 'ledger.timeline_entry', concat_ws(':', x.event_id, x.type, x.intent_id, x.occurred_at) FROM ledger.timeline_entry x
      WHERE NOT (x.type IN ('CallRequested', 'PaymentRejected') AND x.intent_id IN ${REFUSED_CALL}) UNION ALL
    SELECT 'ledger.event_archive', concat_ws(':', x.position, x.event_id, x.type, x.key, x.hash) FROM ledger.event_archive x
      WHERE NOT (x.type IN ('CallRequested', 'PaymentRejected') AND x.key IN (SELECT intent_id::text FROM gateway.call WHERE life ? 'paymentRefused')) UNION ALL
    SELECT 'ledger.access_token', (to_jsonb(x) - 'last_used_at')::text FROM ledger.access_token x
  ) s GROUP BY t`;

/** Every table STATE_SQL digests. */
const WATCHED_TABLES = [...new Set([...STATE_SQL.matchAll(/FROM ([a-z0-9_]+\.[a-z0-9_]+) x\b/g)].map((m) => m[1]!))];

/**
 * Which transactions wrote to the watched tables (and to the event log, whose events set off writes elsewhere): a
 * statement trigger records its transaction id, once. The digest is taken together with the snapshot it read, in one
 * REPEATABLE READ transaction; "did anything change since?" asks for a recorded transaction that snapshot could not
 * see. A write that commits after the digest is therefore never missed — whether it began before or after — so a
 * stale digest cannot be reused by construction (a counter bumped by a trigger moves before its transaction commits:
 * a digest taken in between would be kept though the write lands after it; the setup shows that case is seen).
 */
const WATCH_SQL = `
  CREATE SCHEMA IF NOT EXISTS fuzz_watch;
  CREATE TABLE IF NOT EXISTS fuzz_watch.writes (txid xid8 PRIMARY KEY);
  CREATE OR REPLACE FUNCTION fuzz_watch.note() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN INSERT INTO fuzz_watch.writes VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING; RETURN NULL; END $$;
  ${[...WATCHED_TABLES, 'eventlog.event'].map((t) => `CREATE TRIGGER fuzz_watch AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION fuzz_watch.note();`).join('\n  ')}`;
/** True when a transaction that the snapshot could not see has written a watched table (and has committed). */
const CHANGED_SINCE_SQL = `SELECT EXISTS (SELECT 1 FROM fuzz_watch.writes
  WHERE txid >= pg_snapshot_xmin($1::pg_snapshot) AND NOT pg_visible_in_snapshot(txid, $1::pg_snapshot)) AS changed`;

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

describe(`fuzzing the running embedded system: ${CASES} cases, seed ${SEED}`, () => {
  let system: EmbeddedSystem;
  let facilitator: TestFacilitator;
  let sandbox: TestMppSandbox;
  let base: string;
  let admin: string;
  let pg: PgClient;
  const credentials: string[] = [];
  let victim: string;

  /** The digest of every watched table and the snapshot it was read in (one REPEATABLE READ transaction). */
  let digestMs = 0;
  const digest = async (): Promise<{ snapshot: string; state: Map<string, string> }> => {
    const t0 = Date.now();
    await pg.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      const snapshot = String((await pg.query('SELECT pg_current_snapshot()::text AS s')).rows[0].s);
      const rows = (await pg.query(STATE_SQL)).rows as { t: string; digest: string }[];
      return { snapshot, state: new Map(rows.map((r) => [r.t, r.digest])) };
    } finally {
      await pg.query('COMMIT');
      digestMs += Date.now() - t0;
    }
  };
  /** The ledger's facts recorded in the last seconds (for a violation's report: what changed, and for which call). */
  const latestFacts = async () => JSON.stringify((await pg.query(`SELECT type, intent_id, producer, recorded_at FROM ledger.timeline_entry
    WHERE recorded_at > now() - interval '3 seconds' ORDER BY recorded_at DESC LIMIT 8`)).rows);
  const changedSince = async (snapshot: string): Promise<boolean> => Boolean((await pg.query(CHANGED_SINCE_SQL, [snapshot])).rows[0].changed);
  let known: { snapshot: string; state: Map<string, string> } | undefined;
  let digests = 0;
  /** The digest of every watched table: the last one while nothing it could not see has been written (see WATCH_SQL). */
  const state = async (): Promise<Map<string, string>> => {
    if (known && !(await changedSince(known.snapshot))) return known.state;
    digests++;
    known = await digest();
    return known.state;
  };
  const changed = (a: Map<string, string>, b: Map<string, string>) => [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k));

  beforeAll(async () => {
    // x402 on, verified and settled by the stand-in facilitator in its own process.
    facilitator = await startTestFacilitator({ stateFile: `${os.tmpdir()}/tollgate-fuzz-facilitator-${process.pid}.json` });
    // MPP on beside it, through the sandbox method's backend in its own process.
    sandbox = await startTestMppSandbox({ stateFile: `${os.tmpdir()}/tollgate-fuzz-mpp-${process.pid}.json` });
    system = await startEmbeddedSystem('fuzz', {
      LOG_LEVEL: 'error', GATEWAY_TRUSTED_PROXIES: '127.0.0.1', LEDGER_LINGER_MS: '10', SETTLEMENT_VERIFICATION_WINDOW_MS: '200', PAYMENT_X402_FACILITATOR: facilitator.url, PAYMENT_X402_CHAIN_RPC: facilitator.rpcUrl, PAYMENT_X402_NETWORK: 'eip155:84532', PAYMENT_X402_PAY_TO: '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c',
      PAYMENT_MPP_SANDBOX: sandbox.url, PAYMENT_MPP_SECRET_KEY: 'fuzz-mpp-secret-key-0123456789abcdef012',
    });
    admin = system.adminToken;
    base = system.base;
    pg = new PgClient({ connectionString: system.pgUrl });
    await pg.connect();
    await pg.query(WATCH_SQL);
    expect(WATCHED_TABLES.length).toBe(28); // every table STATE_SQL digests
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
    // word_count priced by use: the metered path (held at its maximum, x402 refused) is fuzzed beside the fixed one.
    const metered = await fetch(`${base}/admin/tools/word_count`, { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
      body: JSON.stringify({ asset: 'USDC', metered: { unit: 'word', unitPriceMinor: '10', minimumMinor: '50', maximumMinor: '1000' } }) });
    expect(metered.status).toBe(200);
    // No stale digest: a write in flight while the digest is taken, committed after it, is seen by the next look.
    const writer = new PgClient({ connectionString: system.pgUrl });
    await writer.connect();
    try {
      const untouched = (await state()).get('gateway.owner');
      await writer.query('BEGIN');
      await writer.query(`UPDATE gateway.owner SET name = name || ' (watched)' WHERE owner_id = $1`, [victim]);
      // Another write commits meanwhile, so the digest is taken again while the first is still in flight.
      await pg.query('UPDATE gateway.owner SET name = name WHERE false');
      expect((await state()).get('gateway.owner')).toBe(untouched); // not committed: not seen yet
      await writer.query('COMMIT');
      expect((await state()).get('gateway.owner')).not.toBe(untouched);
    } finally {
      await writer.end();
    }
    await preparePayments();
    await prepareCredentials();
  });

  /**
   * MPP credentials for the priced tool: each for its own challenge (a PAYMENT_REQUIRED's
   * `_meta["org.paymentauth/payment-required"]`), most by funded payer tokens, some by unknown ones, some forged (the
   * challenge's id changed, so it is no longer ours). Fuzzed calls name them by index (`@@MPP_<k>@@`).
   */
  const mppCredentials: string[] = [];
  const prepareCredentials = async () => {
    for (let k = 0; k < 30; k++) {
      const asked = await send({ family: 'tool-call', method: 'POST', path: '/mcp/fuzz', auth: 'agent', contentType: 'application/json',
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'call_tool', arguments: { name: 'reverse_text', arguments: { text: 'mpp?' } }, _meta: { 'assay/idempotencyKey': `fuzz-ask-mpp-${k}` } } }) }, k);
      const answer = JSON.parse(asked.text.replace(/^[\s\S]*?data: /, '')) as { result?: { _meta?: { 'org.paymentauth/payment-required'?: { challenges: { id: string }[] } } } };
      const challenge = answer.result?._meta?.['org.paymentauth/payment-required']?.challenges[0];
      expect(challenge).toBeDefined();
      const token = k % 10 === 6 ? 'tok_nobody' : await sandbox.wallet(10_000n);
      mppCredentials.push(JSON.stringify({ challenge: k % 10 === 8 ? { ...challenge, id: `x${challenge!.id.slice(1)}` } : challenge, payload: { token } }));
    }
  };

  /**
   * Signed x402 payments for the priced tool (reverse_text, 100): most by payers funded on the stand-in chain, so they
   * verify, settle and pay the call; the rest well-formed but wrong — the wrong amount, an expired window, another
   * recipient, an unfunded payer, a signature by someone else. Fuzzed calls name them by index (`@@X402_<k>@@`).
   */
  const payments: string[] = [];
  const preparePayments = async () => {
    // The price reaches the gateway's catalog shortly after it is set: ask until the call is priced.
    let tries = 0;
    const req = await waitFor('the x402 requirement of the priced tool', async () => {
      const asked = await send({ family: 'tool-call', method: 'POST', path: '/mcp/fuzz', auth: 'agent', contentType: 'application/json',
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'call_tool', arguments: { name: 'reverse_text', arguments: { text: 'price?' } }, _meta: { 'assay/idempotencyKey': `fuzz-ask-price-${tries++}` } } }) }, 0);
      const answer = JSON.parse(asked.text.replace(/^[\s\S]*?data: /, '')) as { result?: { _meta?: { 'x402/paymentRequired'?: { accepts: ExactRequirement[] } } } };
      return answer.result?._meta?.['x402/paymentRequired']?.accepts[0];
    }, 60_000, 300);
    const now = BigInt(Math.floor(Date.now() / 1000));
    const wrong = [
      (p: ReturnType<typeof testPayer>) => p.sign(req, { value: BigInt(req.amount) + 1n }),
      (p: ReturnType<typeof testPayer>) => p.sign(req, { validBefore: now - 600n, validAfter: now - 1200n }),
      (p: ReturnType<typeof testPayer>) => p.sign({ ...req, payTo: '0x000000000000000000000000000000000000dEaD' }).then((x) => ({ ...x, accepted: { ...x.accepted, payTo: req.payTo } })),
      async (p: ReturnType<typeof testPayer>) => ({ ...(await p.sign(req)), payload: { ...(await p.sign(req)).payload, signature: (await testPayer().sign(req)).payload.signature } }),
    ];
    // Of every ten: six valid and funded, one valid but unfunded, three wrong in one of the ways above.
    for (let k = 0; k < 100; k++) {
      const payer = testPayer();
      if (k % 10 !== 6) await facilitator.fund(payer.address, 10_000n);
      const payment = k % 10 <= 6 ? await payer.sign(req) : await wrong[k % wrong.length]!(payer);
      payments.push(JSON.stringify(payment));
    }
  };

  afterAll(async () => {
    await pg?.end();
    await system?.stop();
    await facilitator?.stop();
    await sandbox?.stop();
  });

  const authorization = (r: FuzzRequest, i: number): Record<string, string> =>
    ({ agent: { authorization: `Bearer ${credentials[i % credentials.length]}` }, admin: { authorization: `Bearer ${admin}` }, 'bare-admin': { authorization: admin },
      bogus: { authorization: `Bearer tg_bogus${String(i).padStart(28, '0')}` }, none: {} })[r.auth];
  /**
   * Each case comes from its own client address (the host trusts this loopback proxy): the per-address limits on
   * failed sign-ins would otherwise refuse most cases after the first twenty a minute, and the fuzz would test the
   * rate limiter instead of the code behind it.
   */
  const clientAddress = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

  const send = async (r: FuzzRequest, i: number): Promise<Answer> => {
    const t0 = Date.now();
    try {
      const body = r.body?.replace(/"@@X402_(\d+)@@"/g, (_, k: string) => payments[Number(k) % payments.length]!)
        .replace(/"@@MPP_(\d+)@@"/g, (_, k: string) => mppCredentials[Number(k) % mppCredentials.length]!);
      const res = await fetch(`${base}${r.path.replace('VICTIM', victim)}`, {
        method: r.method, signal: AbortSignal.timeout(20_000),
        headers: { ...authorization(r, i), ...(r.contentType ? { 'content-type': r.contentType } : {}), accept: 'application/json, text/event-stream', 'x-forwarded-for': clientAddress(i) },
        ...(body !== undefined ? { body } : {}),
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
  const QUIET_SQL = `SELECT ((SELECT count(*) FROM gateway.call WHERE NOT (life ? 'settled' OR life ? 'refunded' OR life ? 'paymentRefused'
           OR jsonb_path_exists(life, '$.attempts.*.rejected') OR jsonb_path_exists(life, '$.attempts.*.unknown')))
      + (SELECT count(*) FROM payment.hold WHERE open)
      + (SELECT count(*) FROM payment.x402_attempt WHERE open)
      + (SELECT count(*) FROM settlement.verification WHERE state = 'open')
      -- and the ledger has projected how each ended (it lingers to batch)
      + (SELECT count(*) FROM settlement.verification v WHERE v.state <> 'open'
           AND NOT EXISTS (SELECT 1 FROM ledger.timeline_entry t WHERE t.intent_id = v.intent_id AND t.type IN ('CallSettled', 'CallRefunded')))
      + (SELECT count(*) FROM payment.hold h WHERE NOT h.open
           AND NOT EXISTS (SELECT 1 FROM ledger.timeline_entry t WHERE t.intent_id = h.intent_id AND t.type = 'HoldReleased'))
      -- every event of a topic the ledger consumes is archived (applied)
      + (SELECT count(*) FROM eventlog.event e WHERE e.topic = ANY($1::text[])
           AND NOT EXISTS (SELECT 1 FROM ledger.event_archive a WHERE a.event_id = (e.value::jsonb->>'eventId')::uuid)))::int AS busy`;
  const LEDGER_TOPICS = ServiceEvents.ledger.consumes.map((e) => e.topic);
  let quietMs = 0;
  const quiet = async () => {
    const t0 = Date.now();
    const busy = Number((await pg.query(QUIET_SQL, [LEDGER_TOPICS])).rows[0].busy);
    quietMs += Date.now() - t0;
    return busy === 0;
  };

  /**
   * After a request that wrote something, wait until what it set off (projections, events, settlement) has settled: no
   * work in flight (`quiet`), read before a digest equal to the one before it. Polled every 25 ms (10 s at most).
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
      // Quiet first, then the digest: work still in flight when the digest was read cannot end unseen before the check.
      const idle = await quiet();
      const now = await state();
      if (idle && changed(last, now).length === 0) return now;
      last = now;
      await new Promise((r) => setTimeout(r, 25));
    }
    return last;
  };

  it('answers every case without a 5xx, a hang, internal text, or a state change from a refusal', async () => {
    const arbitrary = fc.oneof({ weight: 31, arbitrary: toolCall }, { weight: 6, arbitrary: x402Call }, { weight: 3, arbitrary: mppCall }, { weight: 25, arbitrary: jsonRpc }, { weight: 25, arbitrary: adminRequest }, { weight: 10, arbitrary: rawRequest });
    const cases = fc.sample(arbitrary, { numRuns: CASES, seed: SEED });
    const violations: { i: number; kind: string; request: string; answer: string }[] = [];
    const counts: Record<string, { cases: number; refused: number; accepted: number }> = {};
    const statuses: Record<string, number> = {};
    const codes: Record<string, number> = {};
    let before = await settled();
    const t0 = Date.now();
    let rateLimited = 0;
    for (const [i, r] of cases.entries()) {
      const seen = known!.snapshot;
      const a = await send(r, i);
      if (/RATE_LIMITED|jsonrpc -32029|http 429/.test(codeOf(a))) rateLimited++;
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
      // Whatever this request set off has landed before the next one is sent, so every effect is its own.
      const after = (await changedSince(seen)) ? await settled() : before;
      const diff = changed(before, after);
      if (refused && diff.length > 0) flag(`state changed by a refused request: ${diff.join(', ')}; latest facts: ${await latestFacts()}`);
      before = after;
    }
    const ready = await fetch(`${base}/health/ready`);
    const x402 = (await pg.query(`SELECT count(*)::int AS attempts, count(*) FILTER (WHERE life->>'step' = 'settled')::int AS settled,
      count(*) FILTER (WHERE life->>'step' = 'refused')::int AS refused FROM payment.x402_attempt`)).rows[0] as { attempts: number; settled: number; refused: number };
    const report = { cases: cases.length, seed: SEED, seconds: Math.round((Date.now() - t0) / 1000), settleSeconds: Math.round(settleMs / 1000), digests, digestSeconds: Math.round(digestMs / 1000), quietSeconds: Math.round(quietMs / 1000), rateLimited, x402, counts, statuses, codes, violations: violations.length };
    process.stdout.write(`\nfuzz report: ${JSON.stringify(report)}\n`);
    expect(violations.slice(0, 20)).toEqual([]);
    // At least 95 % of the cases reach the code under test, not the rate limiter.
    expect(rateLimited / cases.length).toBeLessThanOrEqual(0.05);
    // Well-formed payments reach the facilitator: some settle and pay, some are refused there (given enough of them).
    if ((counts['x402']?.cases ?? 0) >= 200) {
      expect(x402.settled).toBeGreaterThan(0);
      expect(x402.refused).toBeGreaterThan(0);
    }
    expect(cases.length).toBe(CASES);
    expect({ exitCode: system.process.child.exitCode, signal: system.process.child.signalCode }).toEqual({ exitCode: null, signal: null });
    expect(ready.status).toBe(200);
  });
});
