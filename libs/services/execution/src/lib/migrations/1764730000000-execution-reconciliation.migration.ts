import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Attempts that failed before reaching a provider (fallback), each
 * tool's kind and declared read-back, and the reconciliation of calls whose
 * outcome is unknown — resolved by the reconciler or by an operator, once.
 */
export class ExecutionReconciliation1764730000000 implements MigrationInterface {
  name = 'ExecutionReconciliation1764730000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE execution.dispatch_attempt DROP CONSTRAINT dispatch_attempt_status_check');
    await q.query(`ALTER TABLE execution.dispatch_attempt ADD CONSTRAINT dispatch_attempt_status_check CHECK (status IN ('dispatched', 'result_received', 'outcome_unknown', 'failed'))`);
    await q.query('ALTER TABLE execution.tool_binding ADD COLUMN kind text, ADD COLUMN read_back jsonb');
    await q.query(`
      CREATE TABLE execution.reconciliation (
        intent_id   uuid PRIMARY KEY,
        attempt     integer NOT NULL,
        status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
        reason      text NOT NULL,
        tries       integer NOT NULL DEFAULT 0,
        last_error  text,
        opened_at   timestamptz NOT NULL DEFAULT now(),
        resolved_at timestamptz,
        resolution  jsonb
      )`);
    await q.query(`CREATE INDEX reconciliation_open ON execution.reconciliation (opened_at) WHERE status = 'open'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE execution.reconciliation');
    await q.query('ALTER TABLE execution.tool_binding DROP COLUMN kind, DROP COLUMN read_back');
    await q.query(`DELETE FROM execution.dispatch_attempt WHERE status = 'failed'`);
    await q.query('ALTER TABLE execution.dispatch_attempt DROP CONSTRAINT dispatch_attempt_status_check');
    await q.query(`ALTER TABLE execution.dispatch_attempt ADD CONSTRAINT dispatch_attempt_status_check CHECK (status IN ('dispatched', 'result_received', 'outcome_unknown'))`);
  }
}
