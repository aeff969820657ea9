import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { createMessagingTablesV1, dropMessagingTablesV1 } from '@tollgate/messaging';

export class SettlementInit1764680000000 implements MigrationInterface {
  name = 'SettlementInit1764680000000';

  async up(q: QueryRunner): Promise<void> {
    await createMessagingTablesV1(q, 'settlement');
    // One row per call: the facts settlement needs arrive on different topics, in any order.
    await q.query(`
      CREATE TABLE settlement.verification (
        intent_id    uuid PRIMARY KEY,
        hold_id      uuid,
        amount_minor bigint,
        asset        text,
        provider_id  text,
        effect       text CHECK (effect IN ('confirmed', 'rejected')),
        reason       text,
        due_at       timestamptz,
        state        text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'settled', 'refunded')),
        closed_at    timestamptz
      )`);
    await q.query(`CREATE INDEX verification_due ON settlement.verification (due_at) WHERE state = 'open' AND effect = 'confirmed'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE settlement.verification');
    await dropMessagingTablesV1(q, 'settlement');
  }
}
