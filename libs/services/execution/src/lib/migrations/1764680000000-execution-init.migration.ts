import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { createMessagingTablesV1, dropMessagingTablesV1 } from '@tollgate/messaging';

export class ExecutionInit1764680000000 implements MigrationInterface {
  name = 'ExecutionInit1764680000000';

  async up(q: QueryRunner): Promise<void> {
    await createMessagingTablesV1(q, 'execution');
    // Read model of the catalog's bindings, built from the compacted catalog topic.
    await q.query(`
      CREATE TABLE execution.tool_binding (
        tool_id       text PRIMARY KEY,
        name          text NOT NULL,
        version       integer NOT NULL,
        status        text NOT NULL,
        bindings      jsonb NOT NULL,
        output_schema jsonb,
        annotations   jsonb
      )`);
    // A call waits here until both its request and its hold have arrived (they come on different topics).
    await q.query(`
      CREATE TABLE execution.pending_call (
        intent_id     uuid PRIMARY KEY,
        tool_id       text,
        arguments     jsonb,
        operation_key text,
        deadline_at   timestamptz,
        hold_id       uuid,
        updated_at    timestamptz NOT NULL DEFAULT now()
      )`);
    // Dispatched / result received are separate durable facts (B4): an attempt row exists before the request leaves.
    await q.query(`
      CREATE TABLE execution.dispatch_attempt (
        intent_id     uuid NOT NULL,
        attempt       integer NOT NULL,
        binding_id    text NOT NULL,
        provider_id   text NOT NULL,
        status        text NOT NULL CHECK (status IN ('dispatched', 'result_received', 'outcome_unknown')),
        dispatched_at timestamptz NOT NULL DEFAULT now(),
        completed_at  timestamptz,
        PRIMARY KEY (intent_id, attempt)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE execution.dispatch_attempt');
    await q.query('DROP TABLE execution.pending_call');
    await q.query('DROP TABLE execution.tool_binding');
    await dropMessagingTablesV1(q, 'execution');
  }
}
