import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * An attempt's status and a reconciliation's open/resolved were state machines beside the call-life model. Both are
 * now the model's answers (`inFlightAttempt`, `awaitingVerdict`), kept on the call's row where the sweeps query them;
 * the attempt table goes (every attempt's facts are in the call's state), the reconciliation keeps its record
 * (reason, tries, who decided) without a status.
 */
export class ExecutionAttemptsInTheModel1764950000000 implements MigrationInterface {
  name = 'ExecutionAttemptsInTheModel1764950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE execution.pending_call ADD COLUMN in_flight_attempt integer, ADD COLUMN reconciling_attempt integer');
    await q.query(`UPDATE execution.pending_call p SET in_flight_attempt = a.attempt FROM execution.dispatch_attempt a WHERE a.intent_id = p.intent_id AND a.status = 'dispatched'`);
    await q.query(`UPDATE execution.pending_call p SET reconciling_attempt = r.attempt FROM execution.reconciliation r WHERE r.intent_id = p.intent_id AND r.status = 'open'`);
    await q.query('CREATE INDEX pending_call_in_flight ON execution.pending_call (deadline_at) WHERE in_flight_attempt IS NOT NULL');
    await q.query('CREATE INDEX pending_call_reconciling ON execution.pending_call (updated_at) WHERE reconciling_attempt IS NOT NULL');
    await q.query('DROP TABLE execution.dispatch_attempt');
    await q.query('ALTER TABLE execution.reconciliation DROP COLUMN status');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE execution.reconciliation ADD COLUMN status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved'))`);
    await q.query(`UPDATE execution.reconciliation SET status = 'resolved' WHERE resolved_at IS NOT NULL`);
    await q.query(`CREATE INDEX reconciliation_open ON execution.reconciliation (opened_at) WHERE status = 'open'`);
    await q.query(`
      CREATE TABLE execution.dispatch_attempt (
        intent_id uuid NOT NULL, attempt integer NOT NULL, binding_id text NOT NULL, provider_id text NOT NULL,
        status text NOT NULL CHECK (status IN ('dispatched', 'result_received', 'outcome_unknown', 'failed')),
        dispatched_at timestamptz NOT NULL DEFAULT now(), completed_at timestamptz, PRIMARY KEY (intent_id, attempt))`);
    await q.query(`CREATE INDEX dispatch_attempt_in_flight ON execution.dispatch_attempt (intent_id) WHERE status = 'dispatched'`);
    await q.query('DROP INDEX execution.pending_call_reconciling');
    await q.query('DROP INDEX execution.pending_call_in_flight');
    await q.query('ALTER TABLE execution.pending_call DROP COLUMN in_flight_attempt, DROP COLUMN reconciling_attempt');
  }
}
