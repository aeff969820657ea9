import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Execution's pending calls keep the call-life model's state (`life`): whether a call is ready to dispatch is the
 * model's decision, and execution evolves its copy with the facts it emits. Rows recorded before are given the state
 * their columns and dispatch attempts describe.
 */
export class ExecutionCallLife1764860000000 implements MigrationInterface {
  name = 'ExecutionCallLife1764860000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE execution.pending_call ADD COLUMN life jsonb');
    await q.query(`
      UPDATE execution.pending_call p SET life = jsonb_strip_nulls(jsonb_build_object(
        'intentId', p.intent_id,
        'request', CASE WHEN p.tool_id IS NOT NULL THEN jsonb_build_object('ownerId', coalesce(p.owner_id, ''), 'agentId', coalesce(p.agent_id, ''),
                     'mcpUrlId', p.mcp_url_id, 'toolId', p.tool_id, 'price', jsonb_build_object('amountMinor', '0', 'asset', ''),
                     'operationKey', p.operation_key, 'deadlineAt', to_jsonb(p.deadline_at) #>> '{}') END,
        'held', CASE WHEN p.hold_id IS NOT NULL THEN jsonb_build_object('holdId', p.hold_id, 'ownerId', coalesce(p.owner_id, ''),
                  'amount', jsonb_build_object('amountMinor', '0', 'asset', ''), 'free', false) END,
        'attempts', (SELECT coalesce(jsonb_object_agg(a.attempt::text, jsonb_build_object('dispatched', jsonb_build_object('providerId', a.provider_id))), '{}'::jsonb)
                       FROM execution.dispatch_attempt a WHERE a.intent_id = p.intent_id)))`);
    await q.query('ALTER TABLE execution.pending_call ALTER COLUMN life SET NOT NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE execution.pending_call DROP COLUMN life');
  }
}
