import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** Operators find a call by its operation key (the console, `tollgate-ops inspect call`). */
export class LedgerOperationKeyIndex1764830000000 implements MigrationInterface {
  name = 'LedgerOperationKeyIndex1764830000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX timeline_entry_operation_key ON ledger.timeline_entry ((payload->>'operationKey')) WHERE type = 'CallRequested'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ledger.timeline_entry_operation_key');
  }
}
