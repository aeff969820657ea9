import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The journal filtered by tool or agent (through the call's CallRequested fact) and by recorded time,
 * each from an index.
 */
export class LedgerCallFilters1764920000000 implements MigrationInterface {
  name = 'LedgerCallFilters1764920000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX timeline_entry_tool ON ledger.timeline_entry ((payload->>'toolName'), intent_id) WHERE type = 'CallRequested'`);
    await q.query(`CREATE INDEX timeline_entry_agent ON ledger.timeline_entry ((payload->>'agentId'), intent_id) WHERE type = 'CallRequested'`);
    await q.query('CREATE INDEX journal_entry_recorded ON ledger.journal_entry (recorded_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ledger.journal_entry_recorded');
    await q.query('DROP INDEX ledger.timeline_entry_agent');
    await q.query('DROP INDEX ledger.timeline_entry_tool');
  }
}
