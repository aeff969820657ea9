/**
 * B5, G5.2, G8: operation keys, with every service its own process on
 * the real Kafka broker and PostgreSQL. The database decides which of
 * concurrent requests with one key runs the call; every repeat gets the stored
 * answer, or is told why not, and nothing is ever dispatched twice.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as PgClient } from 'pg';
import { type DistributedSystem, startDistributedSystem, waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, postJson, receiptOf } from './agent-client';

jest.setTimeout(300_000);

const SERVICES = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'] as const;
const CALL_DEADLINE_MS = 4000;
/** How long past its deadline a dispatched attempt with no result counts as interrupted (5 s by default). */
const STALL_GRACE_MS = 1000;
const CALL_WAIT_MS = 3000;


describe('operation keys (B5, G5.2, G8)', () => {
  let system: DistributedSystem;
  let adminToken: string;
  let pg: PgClient;
  let agent: Client;
  let credential: string;
  let gw: string;
  let providers: string;

  const call = (name: string, args: Record<string, unknown>, key?: string, c = agent) => callThrough(c, name, args, key);
  const dispatches = async (intentId: string) =>
    Number((await pg.query(`SELECT count(*) AS n FROM execution.pending_call p, jsonb_each(p.life->'attempts') a WHERE p.intent_id = $1 AND a.value ? 'dispatched'`, [intentId])).rows[0].n);
  const ticketsFor = async (key: string) => {
    const all = (await (await fetch(`${providers}/review-tickets/tickets`, { headers: { authorization: `Bearer ${system.providersToken}` } })).json()) as { tickets: { operationKey: string }[] };
    return all.tickets.filter((t) => t.operationKey === key);
  };

  beforeAll(async () => {
    system = await startDistributedSystem(SERVICES, { GATEWAY_CALL_DEADLINE_MS: String(CALL_DEADLINE_MS), GATEWAY_CALL_WAIT_MS: String(CALL_WAIT_MS), EXECUTION_STALL_GRACE_MS: String(STALL_GRACE_MS) });
    adminToken = system.adminToken;
    gw = system.url('gateway');
    providers = `${system.url('sample-providers')}/providers`;
    pg = new PgClient({ connectionString: system.db.url });
    await pg.connect();
    const owner = await postJson(`${gw}/admin/owners`, { name: 'Keys owner' }, adminToken);
    const a = await postJson(`${gw}/admin/owners/${owner.json['ownerId']}/agents`, { name: 'Keys agent' }, adminToken);
    const cred = await postJson(`${gw}/admin/agents/${a.json['agentId']}/credentials`, {}, adminToken);
    expect((await postJson(`${gw}/admin/mcp-urls`, { slug: 'keys', discoveryMode: 'search' }, adminToken)).status).toBe(201);
    for (const p of ['slow-tools', 'review-tickets']) {
      const reg = await postJson(`${system.url('discovery')}/admin/providers`, { providerId: p, endpoint: `${providers}/${p}/mcp` }, adminToken);
      // The whole answer on a failure (CI once saw ok missing here: an error status, not a failed sync).
      expect({ provider: p, status: reg.status, ok: reg.json['ok'], answer: reg.json['ok'] === true ? 'ok' : reg.json }).toEqual({ provider: p, status: 201, ok: true, answer: 'ok' });
    }
    credential = cred.json['credential'] as string;
    agent = await connectAgent(`${gw}/mcp/keys`, credential);
    await waitFor('catalog in the gateway', async () => !errorOf(await agent.callTool({ name: 'get_tool', arguments: { name: 'create_review_ticket' } }) as CallToolResult)
      && !errorOf(await agent.callTool({ name: 'get_tool', arguments: { name: 'slow_echo' } }) as CallToolResult), 60_000, 300);
  });

  afterAll(async () => {
    await agent?.close();
    await pg?.end();
    await system?.stop();
  });

  it('refuses a malformed key with MCP_IDEMPOTENCY_KEY_INVALID and records nothing', async () => {
    const before = Number((await pg.query('SELECT count(*) AS n FROM gateway.call')).rows[0].n);
    for (const bad of ['has space', '', 'x'.repeat(256), 'clé']) {
      expect(errorOf(await call('create_review_ticket', { source_id: 'doc-1', title: 'T' }, bad))).toMatchObject({ code: 'MCP_IDEMPOTENCY_KEY_INVALID', retryable: false });
    }
    expect(Number((await pg.query('SELECT count(*) AS n FROM gateway.call')).rows[0].n)).toBe(before);
  });

  it('replays the stored response for the same key and request, marked replayed, with no second dispatch', async () => {
    const key = `replay-${Date.now()}`;
    const first = await call('create_review_ticket', { source_id: 'doc-1', title: 'Check the figures' }, key);
    expect(first.isError).toBeFalsy();
    expect(first._meta?.['assay/replayed']).toBeUndefined();
    const again = await call('create_review_ticket', { title: 'Check the figures', source_id: 'doc-1' }, key);
    expect(again._meta?.['assay/replayed']).toBe(true);
    expect(again.content).toEqual(first.content);
    expect(again.structuredContent).toEqual(first.structuredContent);
    expect(receiptOf(again)!.intentId).toBe(receiptOf(first)!.intentId);
    expect(await dispatches(receiptOf(first)!.intentId)).toBe(1);
    expect(await ticketsFor(key)).toHaveLength(1);
  });

  it('refuses the same key with other arguments: IDEMPOTENCY_KEY_REUSED, pointing at the original', async () => {
    const key = `reused-${Date.now()}`;
    const first = await call('create_review_ticket', { source_id: 'doc-2', title: 'One' }, key);
    const other = await call('create_review_ticket', { source_id: 'doc-2', title: 'Two' }, key);
    expect(errorOf(other)).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', retryable: false, intentId: receiptOf(first)!.intentId });
    expect(errorOf(await call('slow_echo', { message: 'x' }, key))?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await ticketsFor(key)).toHaveLength(1);
  });

  it('answers IDEMPOTENCY_IN_PROGRESS with retryAfter while the first attempt runs, then replays it', async () => {
    const key = `progress-${Date.now()}`;
    const first = call('slow_echo', { message: 'patience', delayMs: 2000 }, key);
    await new Promise((r) => setTimeout(r, 500));
    const during = errorOf(await call('slow_echo', { message: 'patience', delayMs: 2000 }, key));
    expect(during).toMatchObject({ code: 'IDEMPOTENCY_IN_PROGRESS', retryable: true, retryAfter: 1, intentId: expect.any(String) });
    const done = await first;
    expect(done.content).toEqual([{ type: 'text', text: 'slow: patience' }]);
    const after = await call('slow_echo', { message: 'patience', delayMs: 2000 }, key);
    expect(after._meta?.['assay/replayed']).toBe(true);
    expect(after.content).toEqual(done.content);
    expect(await dispatches(during!.intentId!)).toBe(1);
  });

  it('runs 50 concurrent requests with one key exactly once: one dispatch, one ticket', async () => {
    const key = `burst-${Date.now()}`;
    // Five connections of the same agent, as several workers of one agent would retry.
    const clients = [agent, ...(await Promise.all(Array.from({ length: 4 }, () => connectAgent(`${gw}/mcp/keys`, credential))))];
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => call('create_review_ticket', { source_id: 'doc-9', title: 'Burst' }, key, clients[i % clients.length])));
    const intents = new Set(results.map((r) => receiptOf(r)?.intentId ?? errorOf(r)?.intentId));
    expect(intents.size).toBe(1);
    for (const r of results) {
      const code = errorOf(r)?.code;
      if (code) expect(code).toBe('IDEMPOTENCY_IN_PROGRESS');
      else expect(r.structuredContent).toMatchObject({ source_id: 'doc-9', title: 'Burst', deduplicated: false });
    }
    expect(results.filter((r) => !errorOf(r) && !r._meta?.['assay/replayed']).length).toBeLessThanOrEqual(1);
    expect(await dispatches([...intents][0]!)).toBe(1);
    expect(await ticketsFor(key)).toHaveLength(1);
    expect(Number((await pg.query(`SELECT count(*) AS n FROM gateway.outbox_event WHERE envelope->>'type' = 'CallRequested' AND envelope->'payload'->>'operationKey' = $1`, [key])).rows[0].n)).toBe(1);
    await Promise.all(clients.slice(1).map((c) => c.close()));
  });

  it('answers IDEMPOTENCY_ATTEMPT_STALLED (being reconciled) when the outcome was lost past the deadline, then the verdict; never dispatches again', async () => {
    const key = `lost-${Date.now()}`;
    // The provider answers after the call's deadline: execution records OutcomeUnknown.
    const first = await call('slow_echo', { message: 'late', delayMs: CALL_DEADLINE_MS + 2000 }, key);
    expect(errorOf(first)?.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    // Until the reconciler's verdict (read-only: not delivered, refunded) the answer is IDEMPOTENCY_ATTEMPT_STALLED;
    // the verdict may come within one reconcile interval, so a busy machine can see it replaced already.
    const seen: string[] = [];
    const answered = await waitFor('the unknown outcome', async () => {
      const r = await call('slow_echo', { message: 'late', delayMs: CALL_DEADLINE_MS + 2000 }, key);
      seen.push(errorOf(r)?.code ?? 'ok');
      return errorOf(r)?.code !== 'IDEMPOTENCY_IN_PROGRESS' ? r : undefined;
    }, 20_000, 250).catch((e) => { throw new Error(`${String(e)}; answers seen: ${seen.join(', ')}`); });
    expect(['IDEMPOTENCY_ATTEMPT_STALLED', 'PROVIDER_SYSTEM_ERROR']).toContain(errorOf(answered)?.code);
    expect(errorOf(answered)).toMatchObject({ retryable: false, intentId: errorOf(first)!.intentId });
    const unknown = await pg.query(`SELECT count(*) AS n FROM execution.outbox_event WHERE envelope->>'type' = 'OutcomeUnknown' AND envelope->'payload'->>'intentId' = $1`, [errorOf(first)!.intentId]);
    expect(Number(unknown.rows[0].n)).toBe(1);
    expect(await dispatches(errorOf(first)!.intentId!)).toBe(1);
  });

  it('answers INTERNAL_SERVER_ERROR (retryable, no internal text) when the gateway fails unexpectedly; the retry with the same key runs the call once', async () => {
    const key = `ise-${Date.now()}`;
    const args = { source_id: 'doc-ise', title: 'After the outage' };
    // An unexpected failure inside the gateway: the table that records operation keys is briefly gone.
    await pg.query('ALTER TABLE gateway.operation_key RENAME TO operation_key_away');
    let failed: CallToolResult;
    try {
      failed = await call('create_review_ticket', args, key);
    } finally {
      await pg.query('ALTER TABLE gateway.operation_key_away RENAME TO operation_key');
    }
    expect(errorOf(failed)).toEqual({ code: 'INTERNAL_SERVER_ERROR', retryable: true, message: 'The gateway failed unexpectedly. Retry with the same operation key.' });
    expect(JSON.stringify(failed)).not.toMatch(/operation_key|relation|does not exist|QueryFailedError/);
    expect(await ticketsFor(key)).toHaveLength(0);
    const retried = await call('create_review_ticket', args, key);
    expect(retried.isError).toBeFalsy();
    expect(retried._meta?.['assay/replayed']).toBeUndefined();
    expect(await ticketsFor(key)).toHaveLength(1);
  });

  it('a call whose deadline passed before it could be sent is a clear failure, its hold released — not an unknown outcome', async () => {
    const key = `never-sent-${Date.now()}`;
    // Payment is paused past the call's deadline: the hold arrives too late for anything to be sent.
    const payment = system.processes.find((p) => p.name === 'payment')!;
    payment.child.kill('SIGSTOP');
    let first: CallToolResult;
    try {
      const pending = call('slow_echo', { message: 'too late', delayMs: 0 }, key);
      await new Promise((r) => setTimeout(r, CALL_DEADLINE_MS + 1_500));
      payment.child.kill('SIGCONT');
      first = await pending;
    } finally {
      payment.child.kill('SIGCONT');
    }
    const intentId = errorOf(first)?.intentId ?? receiptOf(first)?.intentId;
    const final = await waitFor('the failure, refunded', async () => {
      const r = await call('slow_echo', { message: 'too late', delayMs: 0 }, key);
      return errorOf(r)?.code === 'PROVIDER_SYSTEM_ERROR' && receiptOf(r)?.status === 'REFUNDED' ? r : undefined;
    }, 30_000, 250);
    expect(errorOf(final)).toMatchObject({ retryable: false, intentId, message: expect.stringMatching(/deadline passed before it could be sent.*nothing was performed/) });
    expect(await dispatches(intentId!)).toBe(0);
    const unknown = await pg.query(`SELECT count(*)::int AS n FROM execution.outbox_event WHERE envelope->>'type' = 'OutcomeUnknown' AND envelope->'payload'->>'intentId' = $1`, [intentId]);
    expect(unknown.rows[0].n).toBe(0);
    expect((await pg.query('SELECT count(*)::int AS n FROM execution.reconciliation WHERE intent_id = $1', [intentId])).rows[0].n).toBe(0);
  });

  it('execution died after dispatch (kill -9): in progress while nobody reconciles, stalled once a reconciliation exists, then final — never dispatched again', async () => {
    const key = `stall-${Date.now()}`;
    const pending = call('slow_echo', { message: 'orphan', delayMs: 2500 }, key);
    // Killed once the gateway has heard CallDispatched (before that, the fact is still in execution's outbox).
    const intentId = await waitFor('the dispatch', async () => {
      const r = await pg.query(`SELECT intent_id FROM gateway.call WHERE operation_key = $1 AND life->'attempts' <> '{}'::jsonb`, [key]);
      return r.rows[0]?.intent_id as string | undefined;
    }, 15_000, 50);
    const execution = system.processes.find((p) => p.name === 'execution')!;
    await execution.stop('SIGKILL');
    expect(errorOf(await pending)).toMatchObject({ code: 'IDEMPOTENCY_IN_PROGRESS', intentId });
    // Well past the deadline and its grace, with no reconciliation anywhere: still in progress (retryable, not charged).
    await new Promise((r) => setTimeout(r, CALL_DEADLINE_MS + STALL_GRACE_MS + 2_000));
    expect((await pg.query('SELECT count(*)::int AS n FROM execution.reconciliation WHERE intent_id = $1', [intentId])).rows[0].n).toBe(0);
    expect(errorOf(await call('slow_echo', { message: 'orphan', delayMs: 2500 }, key))).toMatchObject({ code: 'IDEMPOTENCY_IN_PROGRESS', retryable: true, intentId });
    // Execution back: its reconciler finds the interrupted attempt and opens a reconciliation; the answer changes.
    system.start('execution');
    const seen: string[] = [];
    const final = await waitFor('the verdict', async () => {
      const r = await call('slow_echo', { message: 'orphan', delayMs: 2500 }, key);
      const code = errorOf(r)?.code ?? 'ok';
      if (seen.at(-1) !== code) seen.push(code);
      if (code === 'IDEMPOTENCY_ATTEMPT_STALLED') {
        expect((await pg.query('SELECT count(*)::int AS n FROM execution.reconciliation WHERE intent_id = $1', [intentId])).rows[0].n).toBe(1);
      }
      const settled = ['REFUNDED', 'SETTLED'].includes(receiptOf(r)?.status ?? '');
      return code !== 'IDEMPOTENCY_IN_PROGRESS' && code !== 'IDEMPOTENCY_ATTEMPT_STALLED' && settled ? r : undefined;
    }, 60_000, 250).catch((e) => { throw new Error(`${String(e)}; answers seen: ${seen.join(', ')}`); });
    // Read-only: the reconciler resolves it as not delivered — refunded, the agent told so, nothing charged.
    expect(receiptOf(final)).toMatchObject({ status: 'REFUNDED' });
    expect(await dispatches(intentId)).toBe(1);
  });

});
