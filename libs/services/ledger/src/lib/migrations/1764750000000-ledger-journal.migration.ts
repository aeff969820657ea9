import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** The double-entry journal as finance reads it, projected from the money events (disposable, rebuildable). */
export class LedgerJournal1764750000000 implements MigrationInterface {
  name = 'LedgerJournal1764750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ledger.journal_entry (
        posting_id  text NOT NULL,
        seq         int NOT NULL,
        kind        text NOT NULL,
        intent_id   uuid,
        account     text NOT NULL,
        asset       text NOT NULL,
        amount      bigint NOT NULL,
        occurred_at timestamptz NOT NULL,
        event_id    uuid NOT NULL,
        PRIMARY KEY (posting_id, seq)
      )`);
    await q.query('CREATE INDEX journal_entry_account ON ledger.journal_entry (account, asset, occurred_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE ledger.journal_entry');
  }
}
