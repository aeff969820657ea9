import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { createMessagingTablesV1, dropMessagingTablesV1 } from '@tollgate/messaging';

export class LedgerInit1764680000000 implements MigrationInterface {
  name = 'LedgerInit1764680000000';

  async up(q: QueryRunner): Promise<void> {
    await createMessagingTablesV1(q, 'ledger');
    // A disposable projection: dropped and rebuilt from the topics by ops replay.
    await q.query(`
      CREATE TABLE ledger.timeline_entry (
        event_id    uuid PRIMARY KEY,
        intent_id   uuid NOT NULL,
        type        text NOT NULL,
        producer    text NOT NULL,
        topic       text NOT NULL,
        occurred_at timestamptz NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        payload     jsonb NOT NULL
      )`);
    await q.query('CREATE INDEX timeline_entry_intent ON ledger.timeline_entry (intent_id, occurred_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE ledger.timeline_entry');
    await dropMessagingTablesV1(q, 'ledger');
  }
}
