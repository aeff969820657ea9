import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * G2: device sign-in for the local stdio bridge. An owner holds console keys
 * (hashed, shown once) to approve devices; a sign-in request lives a few
 * minutes, and the credential it mints waits in it only until the device
 * collects it once.
 */
export class GatewayDeviceSignIn1764720000000 implements MigrationInterface {
  name = 'GatewayDeviceSignIn1764720000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE gateway.owner_key (
        key_id      uuid PRIMARY KEY,
        owner_id    uuid NOT NULL REFERENCES gateway.owner (owner_id),
        secret_hash text NOT NULL UNIQUE,
        created_at  timestamptz NOT NULL DEFAULT now(),
        revoked_at  timestamptz
      )`);
    await q.query(`
      CREATE TABLE gateway.device_sign_in (
        request_id         uuid PRIMARY KEY,
        poll_hash          text NOT NULL,
        user_code          text NOT NULL,
        device_name        text NOT NULL,
        slug               text NOT NULL,
        status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'collected')),
        expires_at         timestamptz NOT NULL,
        owner_id           uuid,
        agent_id           uuid,
        pending_credential text,
        created_at         timestamptz NOT NULL DEFAULT now(),
        decided_at         timestamptz
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE gateway.device_sign_in');
    await q.query('DROP TABLE gateway.owner_key');
  }
}
