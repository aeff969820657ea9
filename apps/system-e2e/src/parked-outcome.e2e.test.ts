/**
 * G (every wait ends with a final answer) and R: when the gateway itself cannot record a fact that answers a call
 * (its fold of the call's result keeps failing, so the fact is parked), the waiting agent is told within seconds that
 * the outcome is held for review — not left waiting until its deadline with IDEMPOTENCY_IN_PROGRESS — even though
 * the failing table is the call's own row. The same key says the same; other tenants go on; after the fix and a
 * re-drive, the key replays the call's real result, charged once.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as PgClient } from 'pg';
import { waitFor } from '@tollgate/testing';
import { callThrough, type EmbeddedSystem, errorOf, payingAgentOnEmbedded, receiptOf, runOpsCli, startEmbeddedSystem } from './agent-client';

jest.setTimeout(240_000);

describe('a result the gateway parks', () => {
  let system: EmbeddedSystem;
  let pg: PgClient;
  let victim: { ownerId: string; agent: Client };
  let other: { ownerId: string; agent: Client };

  beforeAll(async () => {
    system = await startEmbeddedSystem('parked-outcome');
    victim = await payingAgentOnEmbedded(system, { slug: 'parked-outcome-a', priceMinor: '100', depositMinor: '10000' });
    other = await payingAgentOnEmbedded(system, { slug: 'parked-outcome-b', priceMinor: '100', depositMinor: '10000' });
    pg = new PgClient({ connectionString: system.pgUrl });
    await pg.connect();
    // The gateway cannot write this owner's call row once it would carry a result body (a bug its data triggers).
    await pg.query(`CREATE FUNCTION gateway.test_refuse_result() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.life->'request'->>'ownerId' = '${victim.ownerId}' AND NEW.result IS NOT NULL THEN RAISE EXCEPTION 'test: this call''s result cannot be written'; END IF; RETURN NEW; END $$`);
    await pg.query('CREATE TRIGGER test_refuse_result BEFORE UPDATE ON gateway.call FOR EACH ROW EXECUTE FUNCTION gateway.test_refuse_result()');
  });
  afterAll(async () => {
    await victim?.agent.close();
    await other?.agent.close();
    await pg?.end();
    await system?.stop();
  });

  const parkedResults = async () => (await pg.query(
    `SELECT count(*)::int AS n FROM gateway.parked_event WHERE consumer = 'gateway.outcomes' AND resolved_at IS NULL AND topic = 'execution.result.received.v1'`,
  )).rows[0].n as number;

  it('tells the waiting agent the outcome is held, within seconds; the key says the same; others go on', async () => {
    const started = Date.now();
    const first = await callThrough(victim.agent, 'reverse_text', { text: 'held' }, 'held-key-1');
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(errorOf(first)).toMatchObject({ code: 'IDEMPOTENCY_ATTEMPT_STALLED', retryable: false });
    expect(errorOf(first)?.message).toContain('held for review');
    expect(await parkedResults()).toBe(1);

    const repeat = await callThrough(victim.agent, 'reverse_text', { text: 'held' }, 'held-key-1');
    expect(errorOf(repeat)).toMatchObject({ code: 'IDEMPOTENCY_ATTEMPT_STALLED' });

    const fine = await callThrough(other.agent, 'reverse_text', { text: 'other tenant' }, 'other-key-1');
    expect(errorOf(fine)).toBeUndefined();
    expect(receiptOf(fine)?.held.amountMinor).toBe('100');
  });

  it('after the fix and a re-drive, the key replays the real result, held once', async () => {
    await pg.query('DROP TRIGGER test_refuse_result ON gateway.call');
    const cli = await runOpsCli('tollgate-ops', 'tools/ops/src/tollgate-ops.ts', ['parked', '--database-url', system.pgUrl, 'redrive', '--service', 'gateway']);
    expect(cli.code).toBe(0);
    await waitFor('the parked result re-driven', async () => (await parkedResults()) === 0, 30_000, 200);
    // The re-drive delivers the fact again; the call is answered once the gateway folds it.
    await waitFor('the call answered', async () => (await pg.query(
      `SELECT count(*)::int AS n FROM gateway.call WHERE answered AND life->'request'->>'ownerId' = $1`, [victim.ownerId])).rows[0].n === 1, 30_000, 200);
    const again = await callThrough(victim.agent, 'reverse_text', { text: 'held' }, 'held-key-1');
    expect(errorOf(again)).toBeUndefined();
    expect(again._meta?.['assay/replayed']).toBe(true);
    expect(JSON.stringify(again.content)).toContain('dleh');
    const holds = await pg.query('SELECT count(*)::int AS n FROM payment.hold WHERE owner_id = $1', [victim.ownerId]);
    expect(holds.rows[0].n).toBe(1);
  });
});
