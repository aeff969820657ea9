/**
 * The gateway's retention job erases answers older than 7 days (keeping the key, so a repeat is
 * refused with IDEMPOTENCY_RESULT_UNAVAILABLE instead of buying again), purges ended sign-ins and spent rate-limit
 * counters — and touches nothing younger. Real PostgreSQL with the gateway's migrations.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { gatewayDataSourceOptions } from '../src/lib/gateway.datasource-options';
import { pruneGateway, SIGN_IN_KEEP_MS } from '../src/lib/retention/gateway-retention.job';

jest.setTimeout(60_000);
const DAY = 86_400_000;

describe('gateway retention', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_gw_retention');
    ds = await openServiceDataSource(gatewayDataSourceOptions(db.url));
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  const call = async (daysAgo: number) => {
    const intentId = randomUUID();
    const agentId = randomUUID();
    const at = new Date(Date.now() - daysAgo * DAY);
    const life = { intentId, attempts: {}, held: { holdId: randomUUID(), ownerId: 'o', amount: { amountMinor: '0', asset: 'USDC' }, free: false, x402PaymentResponse: { tx: '0x1' } } };
    await ds.query(`INSERT INTO gateway.call (intent_id, agent_id, mcp_url_id, tool_id, price_minor, asset, result, created_at, operation_key, life)
      VALUES ($1, $2, $3, 'echo', 0, 'USDC', '{"content":[{"type":"text","text":"secret answer"}]}', $4, 'op-1', $5)`, [intentId, agentId, randomUUID(), at, JSON.stringify(life)]);
    await ds.query(`INSERT INTO gateway.operation_key (agent_id, key, tool_id, request_hash, intent_id, created_at) VALUES ($1, 'op-1', 'echo', 'h', $2, $3)`, [agentId, intentId, at]);
    return intentId;
  };
  const signIn = (expiredMsAgo: number) =>
    ds.query(`INSERT INTO gateway.device_sign_in (request_id, poll_hash, user_code, device_name, slug, expires_at) VALUES ($1, 'h', 'ABCD-EFGH', 'laptop', 'demo', $2)`,
      [randomUUID(), new Date(Date.now() - expiredMsAgo)]);

  /** An OAuth request and an access token of its grant, expired `expiredMsAgo`. */
  const oauth = async (expiredMsAgo: number) => {
    const [ownerId, agentId, urlId, grantId] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const at = new Date(Date.now() - expiredMsAgo);
    await ds.query(`INSERT INTO gateway.owner (owner_id, name) VALUES ($1, 'o')`, [ownerId]);
    await ds.query(`INSERT INTO gateway.agent (agent_id, owner_id, name) VALUES ($1, $2, 'a')`, [agentId, ownerId]);
    await ds.query(`INSERT INTO gateway.mcp_url (mcp_url_id, slug) VALUES ($1, $2)`, [urlId, `u-${urlId.slice(0, 8)}`]);
    await ds.query(`INSERT INTO gateway.oauth_grant (grant_id, client_id, client_name, owner_id, agent_id, mcp_url_id, scopes) VALUES ($1, 'c', 'c', $2, $3, $4, 'mcp')`, [grantId, ownerId, agentId, urlId]);
    await ds.query(`INSERT INTO gateway.oauth_request (request_id, client_id, client_name, redirect_uri, code_challenge, scopes, resource, issuer, mcp_url_id, expires_at, grant_id)
      VALUES ($1, 'c', 'c', 'http://127.0.0.1/cb', 'x', 'mcp', 'r', 'i', $2, $3, $4)`, [randomUUID(), urlId, at, grantId]);
    await ds.query(`INSERT INTO gateway.credential (credential_id, agent_id, secret_hash, grant_id, mcp_url_id, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [randomUUID(), agentId, randomUUID(), grantId, urlId, at]);
  };

  it('erases old answers but keeps their keys, purges ended sign-ins and spent counters, and leaves the rest', async () => {
    const old = await call(8);
    const recent = await call(6);
    await signIn(SIGN_IN_KEEP_MS + 60_000);
    await signIn(60_000); // expired a minute ago: kept a day
    await signIn(-600_000); // still open
    await oauth(SIGN_IN_KEEP_MS + 60_000); // its request and token purged (2 rows)
    await oauth(60_000); // kept a day
    await ds.query(`INSERT INTO gateway.rate_limit (key, points, expire) VALUES ('search:a:1', 3, $1), ('search:a:2', 1, $2)`, [Date.now() - 1000, Date.now() + 60_000]);
    // Registrations: one that never signed in, two days old (pruned); one as old whose sign-in made grant 'c'; one new.
    const twoDaysAgo = new Date(Date.now() - 2 * SIGN_IN_KEEP_MS);
    await ds.query(`INSERT INTO gateway.oauth_client (client_id, metadata, created_at) VALUES ('tgc_unused', '{}', $1), ('c', '{}', $1), ('tgc_new', '{}', now())`, [twoDaysAgo]);

    expect(await pruneGateway(ds)).toEqual({ answers: 1, signIns: 1, oauth: 3, rateLimits: 1 });
    expect((await ds.query('SELECT client_id FROM gateway.oauth_client ORDER BY client_id')).map((r: { client_id: string }) => r.client_id)).toEqual(['c', 'tgc_new']);

    const rows: { intent_id: string; result: unknown; expired: boolean; in_life: unknown }[] =
      await ds.query(`SELECT intent_id, result, answer_expired_at IS NOT NULL AS expired, life #> '{held,x402PaymentResponse}' AS in_life FROM gateway.call`);
    expect(rows.find((r) => r.intent_id === old)).toEqual({ intent_id: old, result: null, expired: true, in_life: null });
    expect(rows.find((r) => r.intent_id === recent)).toMatchObject({ expired: false, in_life: { tx: '0x1' } });
    // The key of the erased answer is still known: a repeat is refused, never dispatched again.
    expect(await ds.query('SELECT count(*)::int AS n FROM gateway.operation_key WHERE intent_id = $1', [old])).toEqual([{ n: 1 }]);
    expect(await ds.query('SELECT count(*)::int AS n FROM gateway.device_sign_in')).toEqual([{ n: 2 }]);
    expect(await ds.query('SELECT key FROM gateway.rate_limit')).toEqual([{ key: 'search:a:2' }]);
    expect(await ds.query('SELECT (SELECT count(*) FROM gateway.oauth_request)::int AS requests, (SELECT count(*) FROM gateway.credential)::int AS tokens')).toEqual([{ requests: 1, tokens: 1 }]);
    expect(await pruneGateway(ds)).toEqual({ answers: 0, signIns: 0, oauth: 0, rateLimits: 0 });
  });
});
