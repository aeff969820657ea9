import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Refresh-token reuse detection (OAuth 2.1, refresh token rotation): a grant remembers the refresh token it rotated
 * away from (hashed). That token coming back means two parties hold the grant's tokens — the client and whoever copied
 * one — so the grant is revoked with every token it issued, and the owner approves again.
 */
export class GatewayOAuthRefreshReuse1764980000000 implements MigrationInterface {
  name = 'GatewayOAuthRefreshReuse1764980000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE gateway.oauth_grant ADD COLUMN previous_refresh_hash text`);
    await q.query(`CREATE INDEX oauth_grant_previous_refresh ON gateway.oauth_grant (previous_refresh_hash) WHERE previous_refresh_hash IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE gateway.oauth_grant DROP COLUMN previous_refresh_hash`);
  }
}
