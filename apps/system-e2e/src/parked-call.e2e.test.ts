/**
 * R and G: a CallRequested that payment cannot apply (its handler keeps failing) is parked — and the agent gets a
 * final, clear answer within seconds instead of IDEMPOTENCY_IN_PROGRESS: refused, no hold placed, nothing charged; the
 * same operation key returns that answer; other tenants' calls go on; a re-drive after the fix changes nothing (the
 * answer stands). Run with the fault on payment.hold, and on payment.charge — the table the refusal itself writes, so
 * the park's own answer hits the fault it parks (it must still commit, and the agent still gets the refusal).
 */
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as PgClient } from 'pg';
import { waitFor } from '@tollgate/testing';
import { callThrough, type EmbeddedSystem, errorOf, payingAgentOnEmbedded, receiptOf, runOpsCli, startEmbeddedSystem } from './agent-client';

jest.setTimeout(240_000);

describe.each(['hold', 'charge'])('a parked CallRequested, the fault on payment.%s', (table) => {
  let system: EmbeddedSystem;
  let pg: PgClient;
  let victim: { ownerId: string; agent: Client };
  let other: { ownerId: string; agent: Client };

  beforeAll(async () => {
    system = await startEmbeddedSystem(`parked-call-${table}`);
    victim = await payingAgentOnEmbedded(system, { slug: `parked-a-${table}`, priceMinor: '100', depositMinor: '10000' });
    other = await payingAgentOnEmbedded(system, { slug: `parked-b-${table}`, priceMinor: '100', depositMinor: '10000' });
    pg = new PgClient({ connectionString: system.pgUrl });
    await pg.connect();
    // A deterministic failure of payment's handler for one owner only (a bug that data of this tenant triggers).
    await pg.query(`CREATE FUNCTION payment.test_refuse_hold() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.owner_id = '${victim.ownerId}' THEN RAISE EXCEPTION 'test: this owner''s hold cannot be written'; END IF; RETURN NEW; END $$`);
    await pg.query(`CREATE TRIGGER test_refuse_hold BEFORE INSERT ON payment.${table} FOR EACH ROW EXECUTE FUNCTION payment.test_refuse_hold()`);
  });
  afterAll(async () => {
    await victim?.agent.close();
    await other?.agent.close();
    await pg?.end();
    await system?.stop();
  });

  const available = async (ownerId: string) => ((await (await fetch(`${system.base}/admin/owners/${ownerId}/wallet`, { headers: { authorization: `Bearer ${system.adminToken}` } })).json()) as { balances: { asset: string; available: string }[] })
    .balances.find((b) => b.asset === 'USDC')?.available;

  it('answers the agent with a final refusal, holds nothing, replays the answer for the key, and lets other tenants through', async () => {
    const before = await available(victim.ownerId);
    const started = Date.now();
    const first = await callThrough(victim.agent, 'reverse_text', { text: 'parked' }, 'parked-key-1');
    // Within seconds: bounded retries, the park, then its answer in a transaction of its own.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(errorOf(first)).toMatchObject({ code: 'INTERNAL_SERVER_ERROR', retryable: false });
    expect(errorOf(first)?.message).toContain('nothing was charged');
    expect(receiptOf(first)).toBeUndefined();

    const repeat = await callThrough(victim.agent, 'reverse_text', { text: 'parked' }, 'parked-key-1');
    expect(errorOf(repeat)).toMatchObject({ code: 'INTERNAL_SERVER_ERROR' });
    expect(repeat._meta?.['assay/replayed']).toBe(true);
    expect(await available(victim.ownerId)).toBe(before);
    const holds = await pg.query('SELECT count(*)::int AS n FROM payment.hold WHERE owner_id = $1', [victim.ownerId]);
    expect(holds.rows[0].n).toBe(0);
    const parked = await pg.query(`SELECT count(*)::int AS n FROM payment.parked_event WHERE resolved_at IS NULL AND reason LIKE '%cannot be written%'`);
    expect(parked.rows[0].n).toBe(1);

    const fine = (await callThrough(other.agent, 'reverse_text', { text: 'other tenant' }, 'other-key-1')) as CallToolResult;
    expect(errorOf(fine)).toBeUndefined();
    expect(receiptOf(fine)?.held.amountMinor).toBe('100');
  });

  it('a re-drive after the fix leaves the answer standing: still no hold, no charge', async () => {
    await pg.query(`DROP TRIGGER test_refuse_hold ON payment.${table}`);
    const before = await available(victim.ownerId);
    const cli = await runOpsCli('tollgate-ops', 'tools/ops/src/tollgate-ops.ts', ['parked', '--database-url', system.pgUrl, 'redrive', '--service', 'payment']);
    expect(cli.code).toBe(0);
    await waitFor('the parked event re-driven', async () => (await pg.query('SELECT count(*)::int AS n FROM payment.parked_event WHERE resolved_at IS NULL')).rows[0].n === 0, 30_000, 200);
    expect(await available(victim.ownerId)).toBe(before);
    expect((await pg.query('SELECT count(*)::int AS n FROM payment.hold WHERE owner_id = $1', [victim.ownerId])).rows[0].n).toBe(0);
    const again = await callThrough(victim.agent, 'reverse_text', { text: 'parked' }, 'parked-key-1');
    expect(errorOf(again)).toMatchObject({ code: 'INTERNAL_SERVER_ERROR' });
  });
});
