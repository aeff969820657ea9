import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Sign-in the specification's way (OAuth 2.1 with PKCE, resource indicators and client ID metadata documents):
 * - `oauth_client`: clients registered dynamically (RFC 7591); clients named by a metadata document URL are fetched;
 * - `oauth_request`: an authorization waiting for the owner's consent, then its one-time code (hashed);
 * - `oauth_grant`: what the owner approved — one client acting as one agent on one MCP URL — with its refresh token
 *   (hashed, rotated on use);
 * - an access token is a credential of that agent bound to the grant's URL, expiring (`grant_id`, `mcp_url_id`,
 *   `expires_at`), so every MCP request authenticates it as it does a pasted credential, and revoking the grant
 *   revokes its tokens.
 */
export class GatewayOAuth1764970000000 implements MigrationInterface {
  name = 'GatewayOAuth1764970000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE gateway.oauth_client (client_id text PRIMARY KEY, metadata jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`
      CREATE TABLE gateway.oauth_grant (
        grant_id           uuid PRIMARY KEY,
        client_id          text NOT NULL,
        client_name        text NOT NULL,
        owner_id           uuid NOT NULL REFERENCES gateway.owner (owner_id),
        agent_id           uuid NOT NULL REFERENCES gateway.agent (agent_id),
        mcp_url_id         uuid NOT NULL REFERENCES gateway.mcp_url (mcp_url_id),
        scopes             text NOT NULL,
        refresh_hash       text UNIQUE,
        refresh_expires_at timestamptz,
        created_at         timestamptz NOT NULL DEFAULT now(),
        refreshed_at       timestamptz,
        revoked_at         timestamptz
      )`);
    await q.query('CREATE INDEX oauth_grant_owner ON gateway.oauth_grant (owner_id, created_at)');
    await q.query(`
      CREATE TABLE gateway.oauth_request (
        request_id     uuid PRIMARY KEY,
        client_id      text NOT NULL,
        client_name    text NOT NULL,
        redirect_uri   text NOT NULL,
        code_challenge text NOT NULL,
        state          text,
        scopes         text NOT NULL,
        resource       text NOT NULL,
        issuer         text NOT NULL,
        mcp_url_id     uuid NOT NULL REFERENCES gateway.mcp_url (mcp_url_id),
        expires_at     timestamptz NOT NULL,
        code_hash      text UNIQUE,
        grant_id       uuid REFERENCES gateway.oauth_grant (grant_id),
        decided_at     timestamptz,
        redeemed_at    timestamptz,
        created_at     timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`ALTER TABLE gateway.credential ADD COLUMN grant_id uuid REFERENCES gateway.oauth_grant (grant_id),
                   ADD COLUMN mcp_url_id uuid REFERENCES gateway.mcp_url (mcp_url_id), ADD COLUMN expires_at timestamptz`);
    await q.query('CREATE INDEX credential_grant ON gateway.credential (grant_id) WHERE grant_id IS NOT NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE gateway.credential DROP COLUMN grant_id, DROP COLUMN mcp_url_id, DROP COLUMN expires_at');
    await q.query('DROP TABLE gateway.oauth_request');
    await q.query('DROP TABLE gateway.oauth_grant');
    await q.query('DROP TABLE gateway.oauth_client');
  }
}
