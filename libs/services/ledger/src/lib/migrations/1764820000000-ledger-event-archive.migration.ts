import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Every event the ledger consumes, kept in the order it was archived, append-only. Each row's hash
 * covers the previous row's hash, its position and the event's canonical text (`archive-events/hash-chain.ts`), so an
 * edit, a removal or a reordering is detectable; positions have no gaps. UPDATE and DELETE are refused by a trigger.
 */
export class LedgerEventArchive1764820000000 implements MigrationInterface {
  name = 'LedgerEventArchive1764820000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ledger.event_archive (
        position    bigint PRIMARY KEY,
        event_id    uuid NOT NULL UNIQUE,
        topic       text NOT NULL,
        type        text NOT NULL,
        key         text NOT NULL,
        occurred_at timestamptz NOT NULL,
        event_text  text NOT NULL,
        prev_hash   text NOT NULL,
        hash        text NOT NULL,
        archived_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE FUNCTION ledger.event_archive_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'ledger.event_archive is append-only'; END $$`);
    await q.query(`CREATE TRIGGER event_archive_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger.event_archive
      FOR EACH STATEMENT EXECUTE FUNCTION ledger.event_archive_append_only()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE ledger.event_archive');
    await q.query('DROP FUNCTION ledger.event_archive_append_only()');
  }
}
