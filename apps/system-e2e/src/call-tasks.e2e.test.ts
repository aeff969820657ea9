/**
 * Long paid calls as tasks (the official tasks extension, `io.modelcontextprotocol/tasks`, on the
 * 2026-07-28 revision), in distributed mode — every service its own process on the real Kafka broker. A call still
 * running when the gateway's wait ends becomes a task whose id is the call's intentId; tasks/get reports the
 * call-life status and, once answered, the answer with its receipt (the same one the operation key replays);
 * tasks/cancel before dispatch releases the hold (execution cancels, settlement refunds), after dispatch it is
 * acknowledged with the reason it came too late (the call runs on); a kill -9 of the gateway and execution right after an acknowledged cancel loses nothing and
 * charges nothing. Clients without the extension get today's IDEMPOTENCY_IN_PROGRESS. A tool the admin marks
 * task-supporting is a task at once for a task-declaring client; `required` refuses the others with -32021.
 */
import { Client as PgClient } from 'pg';
import { type DistributedSystem, startDistributedSystem, waitFor as waitForOnly } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, postJson, receiptOf } from './agent-client';

jest.setTimeout(300_000);

const SERVICES = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'] as const;
const MODERN = '2026-07-28';
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const PRICE = 100;
const DEPOSIT = 10_000;

type RpcAnswer = { status: number; result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };

describe('paid calls as tasks, 2026-07-28', () => {
  let system: DistributedSystem;
  let pg: PgClient;
  let mcpUrl: string;
  let credential: string;
  let ownerId: string;
  let providers: string;

  /** A raw 2026-07-28 request, with the routing headers the revision and the extension define. */
  async function rpc(method: string, params: Record<string, unknown>, options: { capabilities?: Record<string, unknown>; headers?: Record<string, string>; as?: string } = {}): Promise<RpcAnswer> {
    const name = typeof params['taskId'] === 'string' ? params['taskId'] : typeof params['name'] === 'string' ? params['name'] : undefined;
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${options.as ?? credential}`,
        'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}), ...options.headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0', id: 1, method,
        params: { ...params, _meta: { ...(params['_meta'] as object | undefined), 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? TASKS } },
      }),
    });
    return { status: res.status, ...((await res.json()) as Omit<RpcAnswer, 'status'>) };
  }

  /** waitFor, whose timeout also says what each service last warned or failed about (CI once saw this suite's calls stall). */
  const waitFor = <T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs: number, everyMs: number) =>
    waitForOnly(what, check, timeoutMs, everyMs).catch((e: Error) => {
      throw new Error(`${e.message}\nservices' last warnings and errors:\n${system.problems()}`);
    });

  const slowCall = (message: string, delayMs: number, key: string, capabilities?: Record<string, unknown>) =>
    rpc('tools/call', { name: 'call_tool', arguments: { name: 'slow_echo', arguments: { message, delayMs } }, _meta: { 'assay/idempotencyKey': key } }, { capabilities });

  const wallet = async () => Number((await pg.query(`SELECT balance::text AS b FROM payment.balance WHERE account = $1`, [`owner:${ownerId}:available`])).rows[0]?.b ?? 0);
  const providerSaw = async (message: string) => {
    // slow-tools keeps no log; the dispatched attempts in execution's state of the call are its record of what was sent.
    const rows = await pg.query(`SELECT count(*)::int AS n FROM execution.pending_call p JOIN gateway.call c ON c.intent_id = p.intent_id, jsonb_each(p.life->'attempts') a
      WHERE c.operation_key = $1 AND a.value ? 'dispatched'`, [message]);
    return rows.rows[0].n as number;
  };

  beforeAll(async () => {
    system = await startDistributedSystem(SERVICES, { GATEWAY_CALL_WAIT_MS: '300', SETTLEMENT_VERIFICATION_WINDOW_MS: '200', SETTLEMENT_SWEEP_INTERVAL_MS: '100', EXECUTION_STALL_GRACE_MS: '1000', EXECUTION_RECONCILE_INTERVAL_MS: '500' });
    const token = system.adminToken;
    const gw = system.url('gateway');
    providers = `${system.url('sample-providers')}/providers`;
    pg = new PgClient({ connectionString: system.db.url });
    await pg.connect();
    expect((await postJson(`${gw}/admin/mcp-urls`, { slug: 'tasks', discoveryMode: 'search' }, token)).status).toBe(201);
    expect((await postJson(`${system.url('discovery')}/admin/providers`, { providerId: 'slow-tools', endpoint: `${providers}/slow-tools/mcp` }, token)).json['ok']).toBe(true);
    ownerId = (await postJson(`${gw}/admin/owners`, { name: 'Tasks owner' }, token)).json['ownerId'] as string;
    const agent = await postJson(`${gw}/admin/owners/${ownerId}/agents`, { name: 'Tasks agent' }, token);
    credential = (await postJson(`${gw}/admin/agents/${agent.json['agentId']}/credentials`, {}, token)).json['credential'] as string;
    mcpUrl = `${gw}/mcp/tasks`;
    const priced = await fetch(`${system.url('discovery')}/admin/tools/slow_echo`, {
      method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ priceMinor: String(PRICE), asset: 'USDC' }),
    });
    expect(priced.status).toBe(200);
    expect((await postJson(`${system.url('payment')}/admin/owners/${ownerId}/deposits`, { reference: 'tasks', amount: { amountMinor: String(DEPOSIT), asset: 'USDC' } }, token)).status).toBe(201);
    await waitFor('the priced slow_echo in the gateway', async () => {
      const r = await rpc('tools/call', { name: 'get_tool', arguments: { name: 'slow_echo' } });
      return (r.result?.['structuredContent'] as { price?: { amountMinor?: string } } | undefined)?.price?.amountMinor === String(PRICE);
    }, 90_000, 300);
  });

  afterAll(async () => {
    await pg?.end();
    await system?.stop();
  });

  it('server/discover advertises the extension', async () => {
    const discovered = await rpc('server/discover', {});
    expect(discovered.result).toMatchObject({ capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
  });

  it('a call outliving the wait is a task (its id the intentId); tasks/get: working, then completed with the receipt the operation key replays', async () => {
    const created = await slowCall('task one', 1500, 'task-1');
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working', taskId: expect.stringMatching(/^[0-9a-f-]{36}$/), pollIntervalMs: 1000, ttlMs: expect.any(Number) });
    const taskId = created.result!['taskId'] as string;
    // Durable before the answer: the call row (the task) was committed with CallRequested.
    expect((await pg.query('SELECT count(*)::int AS n FROM gateway.call WHERE intent_id = $1', [taskId])).rows[0].n).toBe(1);
    const working = await rpc('tasks/get', { taskId });
    expect(working.result).toMatchObject({ resultType: 'complete', taskId, status: 'working', statusMessage: expect.any(String) });
    const done = await waitFor('the task completed', async () => {
      const r = await rpc('tasks/get', { taskId });
      return r.result?.['status'] === 'completed' ? r.result : undefined;
    }, 30_000, 250);
    const result = done['result'] as { content: unknown[]; _meta: Record<string, unknown> };
    expect(result.content).toEqual([{ type: 'text', text: 'slow: task one' }]);
    expect(result._meta['assay/receipt']).toMatchObject({ intentId: taskId, held: { amountMinor: String(PRICE) } });
    // The same operation key replays the same call (no second purchase), in either era.
    const older = await connectAgent(mcpUrl, credential);
    try {
      const replay = await callThrough(older, 'slow_echo', { message: 'task one', delayMs: 1500 }, 'task-1');
      expect(receiptOf(replay)?.intentId).toBe(taskId);
      expect(replay._meta?.['assay/replayed']).toBe(true);
    } finally {
      await older.close();
    }
    expect(await providerSaw('task-1')).toBe(1);
  });

  it('a client without the extension gets today\'s IDEMPOTENCY_IN_PROGRESS for the same kind of call', async () => {
    const plain = await slowCall('no tasks', 1500, 'task-plain', {});
    expect(plain.result?.['resultType']).toBe('complete');
    expect((plain.result?.['_meta'] as Record<string, { code: string }>)['assay/error']).toMatchObject({ code: 'IDEMPOTENCY_IN_PROGRESS' });
  });

  it('tasks/cancel after dispatch is acknowledged with the reason it was too late; the call completes and is charged', async () => {
    const before = await wallet();
    const created = await slowCall('too late', 2500, 'task-late');
    const taskId = created.result!['taskId'] as string;
    // The gateway's own view must show the dispatch (it decides the refusal): its task says the call was sent.
    await waitFor('the gateway saw the dispatch', async () => /was sent to a provider/.test(String((await rpc('tasks/get', { taskId })).result?.['statusMessage'])), 20_000, 50);
    const refused = await rpc('tasks/cancel', { taskId });
    expect(refused.result).toEqual({ resultType: 'complete', _meta: { 'assay/cancel': { cancelled: false, reason: expect.stringMatching(/already sent to a provider/) } } });
    await waitFor('the task completed', async () => (await rpc('tasks/get', { taskId })).result?.['status'] === 'completed', 30_000, 250);
    await waitFor('the call settled', async () => (await wallet()) === before - PRICE, 30_000, 250);
  });

  it('tasks/cancel before dispatch releases the hold: execution cancels, settlement refunds, nothing is sent', async () => {
    // Payment is down: the call is recorded and waits for its hold, so nothing can be sent yet.
    await [...system.processes].reverse().find((p) => p.name === 'payment')!.stop('SIGTERM');
    const before = await wallet();
    const created = await slowCall('never sent', 0, 'task-cancel');
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = created.result!['taskId'] as string;
    expect((await rpc('tasks/cancel', { taskId })).result).toEqual({ resultType: 'complete' });
    // Execution cancels the call it has not sent; payment, back, holds the price; settlement refunds the hold.
    const cancelled = await waitFor('the task cancelled', async () => {
      const r = await rpc('tasks/get', { taskId });
      return r.result?.['status'] === 'cancelled' ? r.result : undefined;
    }, 60_000, 250);
    expect(cancelled['statusMessage']).toMatch(/nothing was performed/);
    system.start('payment');
    await waitFor('the hold placed and released', async () =>
      (await pg.query(`SELECT life ? 'refunded' AS voided FROM payment.hold WHERE intent_id = $1`, [taskId])).rows[0]?.voided === true, 90_000, 250);
    expect(await wallet()).toBe(before);
    expect(await providerSaw('task-cancel')).toBe(0);
    // A cancel of a cancelled task is acknowledged again; the operation key answers CALL_CANCELLED, not a new purchase.
    expect((await rpc('tasks/cancel', { taskId })).result).toEqual({ resultType: 'complete' });
    const older = await connectAgent(mcpUrl, credential);
    try {
      expect(errorOf(await callThrough(older, 'slow_echo', { message: 'never sent', delayMs: 0 }, 'task-cancel'))).toMatchObject({ code: 'CALL_CANCELLED', retryable: false });
    } finally {
      await older.close();
    }
    expect(await wallet()).toBe(before);
  });

  it('kill -9 mid-cancel: gateway and execution die right after the cancel is acknowledged; after restart the call is cancelled once, refunded, never sent', async () => {
    const processOf = (name: string) => [...system.processes].reverse().find((p) => p.name === name)!;
    const ready = (name: string) => waitFor(`${name} ready`, async () => (await fetch(`${system.url(name)}/health/ready`).catch(() => undefined))?.status === 200, 120_000, 200);
    await processOf('payment').stop('SIGTERM');
    const before = await wallet();
    const created = await slowCall('crash cancel', 0, 'task-crash-cancel');
    const taskId = created.result!['taskId'] as string;
    expect((await rpc('tasks/cancel', { taskId })).result).toEqual({ resultType: 'complete' });
    // The acknowledged cancel is a durable fact before the answer: nothing the crash takes may undo it.
    await Promise.all([processOf('gateway').stop('SIGKILL'), processOf('execution').stop('SIGKILL')]);
    system.start('execution');
    system.start('gateway');
    await Promise.all([ready('execution'), ready('gateway')]);
    system.start('payment');
    await ready('payment');
    await waitFor('the hold placed and released', async () =>
      (await pg.query(`SELECT life ? 'refunded' AS voided FROM payment.hold WHERE intent_id = $1`, [taskId])).rows[0]?.voided === true, 90_000, 250);
    const cancelled = await waitFor('the task cancelled', async () => {
      const r = await rpc('tasks/get', { taskId });
      return r.result?.['status'] === 'cancelled' ? r.result : undefined;
    }, 60_000, 250);
    expect(cancelled['statusMessage']).toMatch(/nothing was performed/);
    expect(await wallet()).toBe(before);
    expect(await providerSaw('task-crash-cancel')).toBe(0);
    // Once: one charge decision, one hold, one refund posting for this call.
    const once = await pg.query(
      `SELECT (SELECT count(*) FROM payment.charge WHERE intent_id = $1)::int AS charges, (SELECT count(*) FROM payment.hold WHERE intent_id = $1)::int AS holds,
              (SELECT count(*) FROM payment.posting WHERE intent_id = $1 AND kind = 'void')::int AS voids`, [taskId]);
    expect(once.rows[0]).toEqual({ charges: 1, holds: 1, voids: 1 });
  });

  it('the extension\'s protocol rules: Mcp-Name must name the task (-32020), the client must declare the extension (-32021), another agent\'s task is not found (-32602)', async () => {
    const created = await slowCall('rules', 0, 'task-rules');
    const taskId = (created.result!['taskId'] ?? (created.result!['_meta'] as { 'assay/receipt': { intentId: string } })['assay/receipt'].intentId) as string;
    const mismatched = await rpc('tasks/get', { taskId }, { headers: { 'mcp-name': 'another' } });
    expect(mismatched).toMatchObject({ status: 400, error: { code: -32020 } });
    const undeclared = await rpc('tasks/get', { taskId }, { capabilities: {} });
    expect(undeclared).toMatchObject({ status: 400, error: { code: -32021, data: { requiredCapabilities: TASKS } } });
    const other = await postJson(`${system.url('gateway')}/admin/owners/${ownerId}/agents`, { name: 'Other agent' }, system.adminToken);
    const otherCredential = (await postJson(`${system.url('gateway')}/admin/agents/${other.json['agentId']}/credentials`, {}, system.adminToken)).json['credential'] as string;
    expect((await rpc('tasks/get', { taskId }, { as: otherCredential })).error).toMatchObject({ code: -32602, message: expect.stringMatching(/not found/) });
    expect((await rpc('tasks/get', { taskId: 'no-such-task' })).error).toMatchObject({ code: -32602 });
  });

  it('the admin marks a tool task-supporting: a task-declaring agent gets a task at once, others the answer; `required` refuses them (-32021)', async () => {
    const patch = (taskSupport: string) => fetch(`${system.url('discovery')}/admin/tools/slow_echo`, {
      method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${system.adminToken}` }, body: JSON.stringify({ taskSupport }),
    });
    expect((await patch('optional')).status).toBe(200);
    let n = 0;
    // A call that answers well inside the 300 ms wait is still a task, once the catalog change reached the gateway.
    const created = await waitFor('slow_echo answered as a task at once', async () => {
      const r = await slowCall('at once', 0, `task-at-once-${++n}`);
      return r.result?.['resultType'] === 'task' ? r.result : undefined;
    }, 60_000, 300);
    expect(created).toMatchObject({ status: 'working', taskId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(created).not.toHaveProperty('result');
    await waitFor('the task completed', async () => (await rpc('tasks/get', { taskId: created['taskId'] as string })).result?.['status'] === 'completed', 30_000, 250);
    // A client without the extension is answered as before.
    expect((await slowCall('plain', 0, 'task-at-once-plain', {})).result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'slow: plain' }] });
    expect((await patch('required')).status).toBe(200);
    const refused = await waitFor('slow_echo refused without the extension', async () => {
      const r = await slowCall('needs tasks', 0, `task-required-${++n}`, {});
      return r.error ? r : undefined;
    }, 60_000, 300);
    expect(refused).toMatchObject({ status: 400, error: { code: -32021, data: { requiredCapabilities: TASKS } } });
    expect((await patch('forbidden')).status).toBe(200);
  });
});
