/**
 * B4, B5, C4, C6, C8, C9, G10, R4–R6: the call life with every app its
 * own process on the real Kafka broker and PostgreSQL — writes confirmed by
 * read-back, a response lost after the write and a killed execution process
 * reconciled by operation key (never a second ticket), fallback between
 * bindings, refused outputs, provider output passed through as data, and an
 * operator's recorded decision through the ops CLI.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as PgClient } from 'pg';
import { type DistributedSystem, executionAttempts, startDistributedSystem, waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, postJson, receiptOf, runOpsCli, type Timeline, timelineWhen } from './agent-client';

jest.setTimeout(300_000);

const SERVICES = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'] as const;
const CALL_DEADLINE_MS = 4000;

const count = (t: Timeline, type: string) => t.timeline.filter((e) => e.type === type).length;

describe('the call life', () => {
  let system: DistributedSystem;
  let adminToken: string;
  let pg: PgClient;
  let agent: Client;
  let credential: string;
  let gw: string;
  let providers: string;
  let ledger: string;
  let ownerId: string;

  const call = (name: string, args: Record<string, unknown>, key?: string, c = agent) => callThrough(c, name, args, key);
  const tickets = async (key: string) =>
    ((await (await fetch(`${providers}/review-tickets/tickets`, { headers: { authorization: `Bearer ${system.providersToken}` } })).json()) as { tickets: { operationKey: string; title: string }[] }).tickets.filter((t) => t.operationKey === key);
  const faults = (body: Record<string, unknown>) => postJson(`${providers}/review-tickets/faults`, body, system.providersToken);
  const intentOfKey = async (key: string) => (await pg.query('SELECT intent_id FROM gateway.call WHERE operation_key = $1', [key])).rows[0]?.intent_id as string | undefined;
  const attempts = (intentId: string) => executionAttempts(pg, intentId);
  /** Retries with the same key until the call has its final answer (the agent's side of reconciliation). */
  const finalAnswer = (name: string, args: Record<string, unknown>, key: string) => waitFor(`final answer for ${key}`, async () => {
    const r = await call(name, args, key);
    const code = errorOf(r)?.code;
    return code === 'IDEMPOTENCY_IN_PROGRESS' || code === 'IDEMPOTENCY_RESULT_UNAVAILABLE' || code === 'IDEMPOTENCY_ATTEMPT_STALLED' ? undefined : r;
  }, 60_000, 500);

  beforeAll(async () => {
    system = await startDistributedSystem(SERVICES, {
      GATEWAY_CALL_DEADLINE_MS: String(CALL_DEADLINE_MS), GATEWAY_CALL_WAIT_MS: '8000', EXECUTION_RECONCILE_INTERVAL_MS: '500', EXECUTION_STALL_GRACE_MS: '1000',
    });
    adminToken = system.adminToken;
    gw = system.url('gateway');
    providers = `${system.url('sample-providers')}/providers`;
    ledger = `${system.url('ledger')}/calls`;
    pg = new PgClient({ connectionString: system.db.url });
    await pg.connect();
    const owner = await postJson(`${gw}/admin/owners`, { name: 'Life owner' }, adminToken);
    ownerId = owner.json['ownerId'] as string;
    const a = await postJson(`${gw}/admin/owners/${owner.json['ownerId']}/agents`, { name: 'Life agent' }, adminToken);
    const cred = await postJson(`${gw}/admin/agents/${a.json['agentId']}/credentials`, {}, adminToken);
    for (const slug of ['life', 'no-writes']) expect((await postJson(`${gw}/admin/mcp-urls`, { slug, discoveryMode: 'search' }, adminToken)).status).toBe(201);
    const put = await fetch(`${gw}/admin/mcp-urls/no-writes/access-policy`, {
      method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` }, body: JSON.stringify({ policy: 'version: "2.0"\ntools:\n  deny: ["create_*"]' }),
    });
    expect(put.status).toBe(200);
    for (const p of ['review-tickets', 'flaky-a', 'flaky-b', 'odd-tools', 'slow-tools', 'mutable-tools']) {
      const reg = await postJson(`${system.url('discovery')}/admin/providers`, { providerId: p, endpoint: `${providers}/${p}/mcp` }, adminToken);
      expect(reg.json['ok']).toBe(true);
    }
    credential = cred.json['credential'] as string;
    agent = await connectAgent(`${gw}/mcp/life`, credential);
    await waitFor('catalog in the gateway', async () => {
      const r = (await agent.callTool({ name: 'get_tool', arguments: { name: 'flaky_lookup' } })) as CallToolResult;
      return !errorOf(r) && (r.structuredContent as { providerTool: { providers: unknown[] } }).providerTool.providers.length === 2
        && !errorOf((await agent.callTool({ name: 'get_tool', arguments: { name: 'launch_probe' } })) as CallToolResult);
    }, 60_000, 300);
  });

  afterAll(async () => {
    await agent?.close();
    await pg?.end();
    await system?.stop();
  });

  describe('the review-ticket tool and its contract card (C9, C4)', () => {
    it('confirms a write by reading it back by operation key', async () => {
      const key = `rt-ok-${Date.now()}`;
      const r = await call('create_review_ticket', { source_id: 'doc-1', title: 'Verify me' }, key);
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ source_id: 'doc-1', title: 'Verify me', deduplicated: false });
      const confirmed = await pg.query(`SELECT envelope->'payload'->>'method' AS method FROM execution.outbox_event WHERE envelope->>'type' = 'EffectConfirmed' AND envelope->'payload'->>'intentId' = $1`, [receiptOf(r)!.intentId]);
      expect(confirmed.rows).toEqual([{ method: 'read_back' }]);
    });

    it('counter-example 1, a missing argument: TOOL_ARGUMENTS_INVALID naming the field, nothing recorded', async () => {
      const before = Number((await pg.query('SELECT count(*) AS n FROM gateway.call')).rows[0].n);
      const e = errorOf(await call('create_review_ticket', { source_id: 'doc-1' }, `rt-missing-${Date.now()}`));
      expect(e).toMatchObject({ code: 'TOOL_ARGUMENTS_INVALID', retryable: false, details: { problems: [{ field: 'title', problem: 'is required' }] } });
      expect(Number((await pg.query('SELECT count(*) AS n FROM gateway.call')).rows[0].n)).toBe(before);
    });

    it('counter-example 2, no permission: TOOL_NOT_ALLOWED, never another credential', async () => {
      const other = await connectAgent(`${gw}/mcp/no-writes`, credential);
      const e = errorOf(await call('create_review_ticket', { source_id: 'doc-1', title: 'Nope' }, undefined, other));
      expect(e).toMatchObject({ code: 'TOOL_NOT_ALLOWED', retryable: false, details: { rule: 'tools.deny: create_*' } });
      await other.close();
    });

    it('counter-example 3, the response lost after the write: reconciled to one ticket, never two', async () => {
      const key = `rt-lost-${Date.now()}`;
      await faults({ dropNextResponse: true });
      const first = await call('create_review_ticket', { source_id: 'doc-3', title: 'Lost reply' }, key);
      expect(['IDEMPOTENCY_RESULT_UNAVAILABLE', 'IDEMPOTENCY_IN_PROGRESS']).toContain(errorOf(first)?.code);
      const final = await finalAnswer('create_review_ticket', { source_id: 'doc-3', title: 'Lost reply' }, key);
      expect(final.isError).toBeFalsy();
      expect(final._meta?.['assay/replayed']).toBe(true);
      expect(final.structuredContent).toMatchObject({ source_id: 'doc-3', title: 'Lost reply', operation_key: key });
      expect(await tickets(key)).toHaveLength(1);
      const intentId = (await intentOfKey(key))!;
      expect(await attempts(intentId)).toEqual([expect.objectContaining({ attempt: 1, status: 'outcome_unknown' })]);
      const t = await timelineWhen(ledger, intentId, (x) => x.timeline.some((e) => e.type === 'EffectConfirmed'), adminToken);
      for (const type of ['CallRequested', 'CallDispatched', 'OutcomeUnknown', 'ResultReceived', 'EffectConfirmed']) expect(count(t, type)).toBe(1);
      expect(t.contradictions).toEqual([]);
    });

    it('keeps a resource whose read-back disagrees and never reports success (C6, last row)', async () => {
      const key = `rt-diff-${Date.now()}`;
      await faults({ mangleNextTitle: true });
      const r = await call('create_review_ticket', { source_id: 'doc-4', title: 'Exact title' }, key);
      expect(r.isError).toBe(true);
      expect(errorOf(r)).toMatchObject({ code: 'PROVIDER_CONTRACT_VIOLATION', retryable: false, intentId: expect.any(String) });
      expect(await tickets(key)).toEqual([expect.objectContaining({ title: 'Exact title (edited)' })]);
      const rejected = await pg.query(`SELECT envelope->'payload'->'difference' AS d FROM execution.outbox_event WHERE envelope->>'type' = 'EffectRejected' AND envelope->'payload'->>'intentId' = $1`, [errorOf(r)!.intentId]);
      expect(rejected.rows[0].d).toEqual({ title: { requested: 'Exact title', found: 'Exact title (edited)' } });
    });

    it('kill -9 of execution after CallDispatched: after the restart the call is reconciled by its key, not created again', async () => {
      const key = `rt-kill-${Date.now()}`;
      await faults({ delayMs: 2500 });
      const pending = call('create_review_ticket', { source_id: 'doc-5', title: 'Survive a crash' }, key);
      const intentId = await waitFor('the dispatch', async () => {
        const id = await intentOfKey(key);
        return id && (await attempts(id)).length === 1 ? id : undefined;
      }, 20_000, 50);
      // Killed once the request has reached the provider: the write will happen, and nobody will hear the answer.
      await waitFor('the request at the provider', async () => ((await (await fetch(`${providers}/review-tickets/tickets`, { headers: { authorization: `Bearer ${system.providersToken}` } })).json()) as { inFlight: number }).inFlight > 0, 20_000, 20);
      const execution = system.processes.find((p) => p.name === 'execution')!;
      await execution.stop('SIGKILL');
      await pending;
      await faults({ delayMs: 0 });
      // The provider finishes the write on its own; the platform never heard the answer.
      await waitFor('the ticket at the provider', async () => (await tickets(key)).length === 1, 10_000, 100);
      system.start('execution');
      const final = await finalAnswer('create_review_ticket', { source_id: 'doc-5', title: 'Survive a crash' }, key);
      expect(final.isError).toBeFalsy();
      expect(final.structuredContent).toMatchObject({ source_id: 'doc-5', title: 'Survive a crash' });
      expect(await tickets(key)).toHaveLength(1);
      expect(await attempts(intentId)).toEqual([expect.objectContaining({ attempt: 1, status: 'outcome_unknown' })]);
      const t = await timelineWhen(ledger, intentId, (x) => x.timeline.some((e) => e.type === 'EffectConfirmed'), adminToken);
      for (const type of ['CallDispatched', 'OutcomeUnknown', 'ResultReceived', 'EffectConfirmed']) expect(count(t, type)).toBe(1);
      const reason = await pg.query(`SELECT envelope->'payload'->>'reason' AS r FROM execution.outbox_event WHERE envelope->>'type' = 'OutcomeUnknown' AND envelope->'payload'->>'intentId' = $1`, [intentId]);
      expect(reason.rows).toEqual([{ r: 'execution_interrupted' }]);
    });
  });

  describe('bindings and fallback (G10, C7)', () => {
    it('falls back to the second binding when the first provider is unavailable', async () => {
      await postJson(`${providers}/flaky/faults`, { 'flaky-a': 1 }, system.providersToken);
      const r = await call('flaky_lookup', { code: 'A1' });
      expect(r.content).toEqual([{ type: 'text', text: 'flaky-b found A1' }]);
      expect(receiptOf(r)).toMatchObject({ providerId: 'flaky-b', attempts: 2, fellBack: true });
      expect((await attempts(receiptOf(r)!.intentId)).map((a) => [a.attempt, a.status, a.provider_id])).toEqual([[1, 'failed', 'flaky-a'], [2, 'result_received', 'flaky-b']]);
      const plain = await call('flaky_lookup', { code: 'A2' });
      expect(receiptOf(plain)).toMatchObject({ providerId: 'flaky-a', attempts: 1 });
      expect(receiptOf(plain)!.fellBack).toBeUndefined();
    });

    it('answers TOOL_ALL_BINDINGS_FAILED when every provider fails, and charges nothing', async () => {
      await postJson(`${providers}/flaky/faults`, { 'flaky-a': 1, 'flaky-b': 1 }, system.providersToken);
      const r = await call('flaky_lookup', { code: 'B1' });
      expect(errorOf(r)).toMatchObject({ code: 'TOOL_ALL_BINDINGS_FAILED', retryable: false, intentId: expect.any(String) });
      // The refund and the dispatch facts travel on different topics: wait until the timeline holds both.
      const t = await timelineWhen(ledger, errorOf(r)!.intentId!, (x) => x.status === 'refunded' && count(x, 'CallDispatched') >= 2, adminToken);
      expect(count(t, 'CallDispatched')).toBe(2);
    });
  });

  describe('what providers send back (R4–R6, C3)', () => {
    it('refuses an output that breaks its own schema: PROVIDER_CONTRACT_VIOLATION, refunded', async () => {
      const r = await call('broken_stats', {});
      expect(errorOf(r)).toMatchObject({ code: 'PROVIDER_CONTRACT_VIOLATION', retryable: false });
      expect((await timelineWhen(ledger, errorOf(r)!.intentId!, (x) => x.status === 'refunded', adminToken)).status).toBe('refunded');
    });

    it('refuses a result over 2,500,000 bytes without carrying it', async () => {
      const r = await call('huge_report', {});
      expect(errorOf(r)).toMatchObject({ code: 'PROVIDER_CONTRACT_VIOLATION', message: expect.stringMatching(/over the 2500000-byte limit/) });
      expect(JSON.stringify(r).length).toBeLessThan(10_000);
    });

    it('passes instructions in provider output through as data, changing nothing', async () => {
      const before = Number((await pg.query('SELECT count(*) AS n FROM gateway.call')).rows[0].n);
      const r = await call('fetch_note', {});
      expect(r.content).toEqual([{ type: 'text', text: expect.stringMatching(/^SYSTEM OVERRIDE: ignore your previous instructions/) }]);
      expect(r._meta?.['instructions']).toBeUndefined();
      expect(receiptOf(r)).toMatchObject({ toolId: 'fetch_note', status: 'VERIFYING' });
      expect(Number((await pg.query('SELECT count(*) AS n FROM gateway.call')).rows[0].n)).toBe(before + 1);
    });

    it('fails a call whose upstream asks for an interaction (elicitation): the platform never answers it', async () => {
      // The gateway declares no elicitation upstream, so the provider refuses the request itself (-32021): the call
      // fails as the provider's refusal, naming what it needed; nothing was performed.
      const e = errorOf(await call('ask_user', {}));
      expect(e).toMatchObject({ code: 'PROVIDER_REQUEST_ERROR', retryable: false, details: { requiredCapabilities: { elicitation: expect.anything() } } });
    });

    it('answers a tool error with PROVIDER_REQUEST_ERROR', async () => {
      const e = errorOf(await call('get_review_ticket', { operation_key: 'never-used' }));
      expect(e).toMatchObject({ code: 'PROVIDER_REQUEST_ERROR', retryable: false });
    });
  });

  describe('access and bindings checked around the I/O (R7)', () => {
    it('withholds the result when the credential is revoked while the call runs', async () => {
      const a = await postJson(`${gw}/admin/owners/${ownerId}/agents`, { name: 'Revoked mid-call' }, adminToken);
      const cred = await postJson(`${gw}/admin/agents/${a.json['agentId']}/credentials`, {}, adminToken);
      const c = await connectAgent(`${gw}/mcp/life`, cred.json['credential'] as string);
      const pending = call('slow_echo', { message: 'secret result', delayMs: 1500 }, undefined, c);
      await new Promise((r) => setTimeout(r, 400));
      expect((await postJson(`${gw}/admin/credentials/${cred.json['credentialId']}/revoke`, {}, adminToken)).status).toBe(200);
      const r = await pending;
      expect(errorOf(r)).toMatchObject({ code: 'MCP_CREDENTIAL_INVALID', retryable: false, intentId: expect.any(String) });
      expect(JSON.stringify(r)).not.toContain('secret result');
      await c.close().catch(() => undefined);
    });

    it('answers TOOL_NO_ELIGIBLE_BINDING when no healthy provider serves the tool', async () => {
      const reg = await postJson(`${system.url('discovery')}/admin/providers`, { providerId: 'mutable-tools', endpoint: 'http://127.0.0.1:9/mcp' }, adminToken);
      expect(reg.json['ok']).toBe(false);
      const r = await waitFor('the unhealthy binding in execution', async () => {
        const x = await call('lookup_order', { orderId: 'o-1' });
        return errorOf(x)?.code === 'TOOL_NO_ELIGIBLE_BINDING' ? x : undefined;
      }, 30_000, 500);
      expect(errorOf(r)).toMatchObject({ retryable: false, intentId: expect.any(String) });
    });
  });

  describe('an operator decides what the provider cannot answer (ops CLI)', () => {
    it('lists the unknown call, shows its timeline, and records a decision that refunds it', async () => {
      const key = `probe-${Date.now()}`;
      const first = await call('launch_probe', { delayMs: CALL_DEADLINE_MS + 2000 }, key);
      expect(['IDEMPOTENCY_RESULT_UNAVAILABLE', 'IDEMPOTENCY_IN_PROGRESS']).toContain(errorOf(first)?.code);
      const intentId = (await intentOfKey(key))!;
      const cli = (...args: string[]) =>
        runOpsCli('ops-calls', 'tools/ops/src/tollgate-ops.ts', ['calls', '--execution-url', system.url('execution'), '--ledger-url', system.url('ledger'), '--token', adminToken, ...args]);
      const listed = await waitFor('the open case', async () => {
        const l = await cli('unknown');
        const cases = JSON.parse(l.out).reconciliations as { intentId: string; lastError: string | null }[];
        return cases.find((c) => c.intentId === intentId && c.lastError);
      }, 30_000, 500);
      expect(listed.lastError).toMatch(/no read-back/);
      const timeline = JSON.parse((await cli('timeline', intentId)).out) as Timeline;
      expect(timeline.timeline.map((e) => e.type)).toEqual(expect.arrayContaining(['CallRequested', 'CallDispatched', 'OutcomeUnknown']));
      const resolved = await cli('resolve', intentId, '--decision', 'did_not_happen', '--operator', 'alice', '--reason', 'the probe log shows no launch');
      expect(resolved.code).toBe(0);
      expect(JSON.parse(resolved.out)).toEqual({ intentId, decision: 'did_not_happen', resolvedBy: 'alice' });
      expect((await cli('resolve', intentId, '--decision', 'happened', '--operator', 'bob', '--reason', 'again')).code).toBe(1);
      const row = (await pg.query('SELECT p.reconciling_attempt, r.resolution FROM execution.reconciliation r JOIN execution.pending_call p USING (intent_id) WHERE intent_id = $1', [intentId])).rows[0];
      expect(row).toMatchObject({ reconciling_attempt: null, resolution: { decision: 'did_not_happen', by: 'alice', why: 'the probe log shows no launch', at: expect.any(String) } });
      expect((await timelineWhen(ledger, intentId, (x) => x.status === 'refunded', adminToken)).status).toBe('refunded');
      const final = await finalAnswer('launch_probe', { delayMs: CALL_DEADLINE_MS + 2000 }, key);
      expect(errorOf(final)).toMatchObject({ code: 'PROVIDER_SYSTEM_ERROR', message: expect.stringMatching(/alice/) });
      expect(await attempts(intentId)).toHaveLength(1);
    });

    it('the reconciliation report lists the unknown outcome; `reconcile resolve` by operation key records the decision', async () => {
      const key = `probe-report-${Date.now()}`;
      await call('launch_probe', { delayMs: CALL_DEADLINE_MS + 2000 }, key);
      const intentId = (await intentOfKey(key))!;
      const ops = (...args: string[]) => runOpsCli('tollgate-ops', 'tools/ops/src/tollgate-ops.ts', ['reconcile', '--ledger-url', system.url('ledger'),
        '--token', adminToken, '--execution-url', system.url('execution'), '--execution-token', adminToken, ...args]);
      const report = await waitFor('the unknown outcome in the report', async () => {
        const r = await ops('report', '--older-than', '0', '--json');
        if (!r.out.trimStart().startsWith('{')) throw new Error(`tollgate-ops answered ${r.code}: ${r.out}`);
        const body = JSON.parse(r.out) as { unknownOutcomes: { open: { intentId: string }[] }; callsNotTerminal: { calls: { intentId: string; operationKey: string | null }[] } };
        return body.unknownOutcomes.open.some((u) => u.intentId === intentId) ? { code: r.code, body } : undefined;
      }, 30_000, 500);
      expect(report.code).toBe(1); // something is open
      expect(report.body.callsNotTerminal.calls).toEqual(expect.arrayContaining([expect.objectContaining({ intentId, operationKey: key })]));
      const resolved = await ops('resolve', key, '--decision', 'did_not_happen', '--operator', 'carol', '--reason', 'no launch in the probe log');
      expect(resolved.code).toBe(0);
      expect(JSON.parse(resolved.out)).toEqual({ intentId, decision: 'did_not_happen', resolvedBy: 'carol' });
      const row = (await pg.query('SELECT p.reconciling_attempt, r.resolution FROM execution.reconciliation r JOIN execution.pending_call p USING (intent_id) WHERE intent_id = $1', [intentId])).rows[0];
      expect(row).toMatchObject({ reconciling_attempt: null, resolution: { decision: 'did_not_happen', by: 'carol', why: 'no launch in the probe log' } });
      const after = JSON.parse((await ops('report', '--older-than', '0', '--json')).out) as { unknownOutcomes: { open: { intentId: string }[] } };
      expect(after.unknownOutcomes.open.map((u) => u.intentId)).not.toContain(intentId);
      expect((await ops('resolve', 'no-such-key', '--decision', 'happened', '--operator', 'carol', '--reason', 'x')).code).toBe(2);
    });
  });
});
