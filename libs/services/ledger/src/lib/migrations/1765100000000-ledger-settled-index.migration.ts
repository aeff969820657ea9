import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** The usage export reads settled calls by settlement time: a partial index on the CallSettled entries. */
export class LedgerSettledIndex1765100000000 implements MigrationInterface {
  name = 'LedgerSettledIndex1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX timeline_entry_settled ON ledger.timeline_entry (occurred_at, intent_id) WHERE type = 'CallSettled'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ledger.timeline_entry_settled');
  }
}
