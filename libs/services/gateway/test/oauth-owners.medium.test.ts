/**
 * Medium tier (real PostgreSQL with the gateway's migrations; no HTTP): the OAuth sign-in's owners apart and its
 * races (G1, G2). Two owners each hold a grant; whatever one does with the other's grant, token or owner key is
 * refused and changes nothing. One code redeemed by two token requests at once gives exactly one token; a refresh
 * token rotated three times in a row keeps working (the rotated token is stored each time).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { UnauthorizedClientError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { type OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { hashCredential } from '../src/lib/authenticate/credential-hash';
import { type IdentityCache } from '../src/lib/authenticate/identity-cache.service';
import { gatewayDataSourceOptions } from '../src/lib/gateway.datasource-options';
import { type GatewayOptions } from '../src/lib/gateway.options';
import { OAuthGrants } from '../src/lib/oauth/grants.controller';
import { TollgateOAuthProvider } from '../src/lib/oauth/oauth-provider';
import { OAuthRecords } from '../src/lib/oauth/oauth.repository';
import { SignIns } from '../src/lib/sign-in/sign-ins.repository';

jest.setTimeout(60_000);

const BASE = 'http://127.0.0.1:3000';

describe('OAuth owners apart and its races (medium tier, G1, G2)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let provider: TollgateOAuthProvider;
  let grants: OAuthGrants;
  /** The replicas' caches are told of every revocation; here the count of those notices is what is checked. */
  let cacheChanges = 0;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_gw_oauth');
    ds = await openServiceDataSource(gatewayDataSourceOptions(db.url));
    const cache = { changed: async () => void cacheChanges++ } as unknown as IdentityCache;
    provider = new TollgateOAuthProvider(ds, { oauth: {} } as GatewayOptions, cache);
    grants = new OAuthGrants(ds, cache);
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  /** An owner with an MCP URL, an agent, an owner key, and an approved authorization request: its code and client. */
  async function owner(name: string) {
    const [ownerId, agentId, urlId] = [randomUUID(), randomUUID(), randomUUID()];
    await ds.query('INSERT INTO gateway.owner (owner_id, name) VALUES ($1, $2)', [ownerId, name]);
    await ds.query('INSERT INTO gateway.agent (agent_id, owner_id, name) VALUES ($1, $2, $3)', [agentId, ownerId, `${name} app`]);
    await ds.query('INSERT INTO gateway.mcp_url (mcp_url_id, slug, owner_id) VALUES ($1, $2, $3)', [urlId, `${name}-${urlId.slice(0, 8)}`, ownerId]);
    const ownerKey = `tgo_${randomBytes(16).toString('hex')}`;
    const keyId = randomUUID();
    expect(await SignIns.insertOwnerKey(ds, keyId, ownerId, hashCredential(ownerKey))).toBe(true);
    const client = { client_id: `tgc_${name}_${randomUUID().slice(0, 8)}`, redirect_uris: ['http://127.0.0.1/cb'] } as OAuthClientInformationFull;
    const verifier = randomBytes(32).toString('base64url');
    const requestId = randomUUID();
    await OAuthRecords.insertRequest(ds, { request_id: requestId, client_id: client.client_id, client_name: name, redirect_uri: 'http://127.0.0.1/cb',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'), state: null, scopes: 'mcp', resource: `${BASE}/mcp/${name}`, issuer: `${BASE}/`,
      mcp_url_id: urlId, expires_at: new Date(Date.now() + 60_000) });
    const code = `tgo_${randomBytes(32).toString('base64url')}`;
    const grantId = randomUUID();
    expect(await ds.transaction((m) => OAuthRecords.approve(m, requestId,
      { grant_id: grantId, client_id: client.client_id, client_name: name, owner_id: ownerId, agent_id: agentId, mcp_url_id: urlId, scopes: 'mcp' }, hashCredential(code)))).toBe(true);
    return { ownerId, keyId, ownerKey, client, code, grantId };
  }

  const liveTokens = async (grantId: string) => Number((await ds.query(
    'SELECT count(*) AS n FROM gateway.credential WHERE grant_id = $1 AND revoked_at IS NULL', [grantId]))[0].n);
  const grantRow = async (grantId: string) => (await ds.query('SELECT revoked_at, refresh_hash FROM gateway.oauth_grant WHERE grant_id = $1', [grantId]))[0];

  it('one code redeemed by two token requests at once gives exactly one token', async () => {
    const a = await owner('race');
    const outcomes = await Promise.allSettled([0, 1, 2].map(() => provider.exchangeAuthorizationCode(a.client, a.code)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.errorCode)).toEqual(['invalid_grant', 'invalid_grant']);
    // The losers presented a used code: that is a replay, so the grant the winner got is revoked with its token.
    expect(await liveTokens(a.grantId)).toBe(0);
  });

  it('a refresh token rotated three times in a row keeps working, and each rotation retires the one before', async () => {
    const a = await owner('rotate');
    let tokens = await provider.exchangeAuthorizationCode(a.client, a.code);
    for (let i = 0; i < 3; i++) {
      const next = await provider.exchangeRefreshToken(a.client, tokens.refresh_token!);
      expect(next.refresh_token).not.toBe(tokens.refresh_token);
      expect((await grantRow(a.grantId)).refresh_hash).toBe(hashCredential(next.refresh_token!));
      tokens = next;
    }
    expect(await liveTokens(a.grantId)).toBe(4);
    expect((await grantRow(a.grantId)).revoked_at).toBeNull();
  });

  it('owner A cannot revoke or list owner B\'s grant, and B\'s tokens keep working', async () => {
    const [a, b] = [await owner('alice'), await owner('bob')];
    await provider.exchangeAuthorizationCode(a.client, a.code);
    await provider.exchangeAuthorizationCode(b.client, b.code);
    const before = cacheChanges;
    await expect(grants.revoke(b.grantId, a.ownerId)).rejects.toMatchObject({ response: { code: 'GRANT_NOT_FOUND' } });
    expect(await liveTokens(b.grantId)).toBe(1);
    expect((await grantRow(b.grantId)).revoked_at).toBeNull();
    expect(cacheChanges).toBe(before);
    expect((await grants.list(a.ownerId)).grants.map((g) => g.grantId)).toEqual([a.grantId]);
    // Its own owner can.
    await expect(grants.revoke(b.grantId, b.ownerId)).resolves.toEqual({ grantId: b.grantId, revoked: true });
    expect(await liveTokens(b.grantId)).toBe(0);
  });

  it('a client cannot revoke a token issued to another client (RFC 7009 section 2.1); its own it can', async () => {
    const [a, b] = [await owner('carol'), await owner('dave')];
    const bTokens = await provider.exchangeAuthorizationCode(b.client, b.code);
    await expect(provider.revokeToken(a.client, { token: bTokens.access_token })).rejects.toBeInstanceOf(UnauthorizedClientError);
    await expect(provider.revokeToken(a.client, { token: bTokens.refresh_token! })).rejects.toBeInstanceOf(UnauthorizedClientError);
    expect(await liveTokens(b.grantId)).toBe(1);
    expect((await grantRow(b.grantId)).revoked_at).toBeNull();
    await provider.revokeToken(b.client, { token: bTokens.access_token });
    expect((await grantRow(b.grantId)).revoked_at).not.toBeNull();
  });

  it('an owner key is revoked only by its owner; once revoked it names no one', async () => {
    const [a, b] = [await owner('erin'), await owner('frank')];
    expect(await SignIns.revokeOwnerKey(ds, b.keyId, a.ownerId)).toBe(false);
    expect(await SignIns.ownerOfKey(ds, hashCredential(b.ownerKey))).toBe(b.ownerId);
    expect((await SignIns.ownerKeys(ds, a.ownerId)).map((k) => k.key_id)).toEqual([a.keyId]);
    expect(await SignIns.revokeOwnerKey(ds, b.keyId, b.ownerId)).toBe(true);
    expect(await SignIns.ownerOfKey(ds, hashCredential(b.ownerKey))).toBeUndefined();
    expect(await SignIns.revokeOwnerKey(ds, b.keyId, b.ownerId)).toBe(false);
  });
});
