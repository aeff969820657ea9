import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The call's life as the call-life model's state (`life`, plain JSON): the outcome columns of `gateway.call` are now
 * derived from it on every save. Calls recorded before are given the state their columns describe.
 */
export class GatewayCallLife1764860000000 implements MigrationInterface {
  name = 'GatewayCallLife1764860000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE gateway.call ADD COLUMN life jsonb');
    await q.query(`
      UPDATE gateway.call c SET life = jsonb_strip_nulls(jsonb_build_object(
        'intentId', c.intent_id,
        'request', jsonb_build_object('ownerId', '', 'agentId', c.agent_id, 'mcpUrlId', c.mcp_url_id, 'toolId', c.tool_id,
                     'price', jsonb_build_object('amountMinor', c.price_minor::text, 'asset', c.asset),
                     'operationKey', c.operation_key, 'deadlineAt', to_jsonb(c.deadline_at) #>> '{}'),
        'held', CASE WHEN c.held_minor IS NOT NULL THEN jsonb_build_object('holdId', '', 'ownerId', '',
                  'amount', jsonb_build_object('amountMinor', c.held_minor::text, 'asset', c.asset), 'free', false, 'x402PaymentResponse', c.x402_response) END,
        'paymentRefused', CASE WHEN c.error->>'stage' = 'payment' THEN c.error - 'stage' END,
        'attempts', (SELECT coalesce(jsonb_object_agg(n::text, a), '{}'::jsonb) FROM (
            SELECT n, jsonb_strip_nulls(jsonb_build_object(
              'dispatched', CASE WHEN c.provider_id IS NOT NULL THEN jsonb_build_object('providerId', c.provider_id) END,
              'result', CASE WHEN n = c.result_attempt THEN jsonb_build_object('providerId', coalesce(c.provider_id, ''), 'outcome', '',
                          'classification', coalesce(c.classification, ''), 'resultDigest', '', 'isError', coalesce((c.result->>'isError')::boolean, false)) END,
              'confirmed', CASE WHEN n = c.effect_attempt AND c.effect = 'confirmed' THEN jsonb_build_object('method', '') END,
              'unknown', CASE WHEN n = greatest(c.attempts, 1) AND c.error->>'code' = 'IDEMPOTENCY_RESULT_UNAVAILABLE'
                           THEN jsonb_build_object('providerId', coalesce(c.provider_id, ''), 'reason', '', 'detail', '') END,
              'rejected', CASE WHEN n = greatest(c.attempts, 1) AND c.error IS NOT NULL AND c.error->>'stage' IS DISTINCT FROM 'payment'
                                 AND c.error->>'code' <> 'IDEMPOTENCY_RESULT_UNAVAILABLE'
                            THEN jsonb_build_object('code', c.error->>'code', 'reason', c.error->>'message') END)) AS a
              FROM generate_series(1, greatest(c.attempts, CASE WHEN c.error IS NOT NULL AND c.error->>'stage' IS DISTINCT FROM 'payment' THEN 1 ELSE 0 END)) n) x
           WHERE a <> '{}'::jsonb),
        'settled', CASE WHEN c.settlement = 'settled' THEN jsonb_build_object('holdId', '', 'providerId', coalesce(c.provider_id, ''),
                     'amount', jsonb_build_object('amountMinor', coalesce(c.held_minor, 0)::text, 'asset', c.asset)) END,
        'refunded', CASE WHEN c.settlement = 'refunded' THEN jsonb_build_object('holdId', '',
                      'amount', jsonb_build_object('amountMinor', coalesce(c.held_minor, 0)::text, 'asset', c.asset), 'reason', '') END))`);
    await q.query('ALTER TABLE gateway.call ALTER COLUMN life SET NOT NULL');
    // A waiting call_tool request needs one wake-up: when its call becomes answered (the model's isAnswered), not on
    // every fact recorded (each wake-up is a read).
    await q.query('ALTER TABLE gateway.call ADD COLUMN answered boolean NOT NULL DEFAULT false');
    await q.query(`UPDATE gateway.call SET answered = (error IS NOT NULL OR (effect = 'confirmed' AND (held_minor IS NOT NULL OR settlement IS NOT NULL)))`);
    await q.query('DROP TRIGGER call_changed ON gateway.call');
    await q.query(`CREATE TRIGGER call_answered AFTER UPDATE OF answered ON gateway.call FOR EACH ROW
      WHEN (NEW.answered AND NOT OLD.answered) EXECUTE FUNCTION gateway.notify_call_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER call_answered ON gateway.call');
    await q.query('CREATE TRIGGER call_changed AFTER UPDATE ON gateway.call FOR EACH ROW EXECUTE FUNCTION gateway.notify_call_changed()');
    await q.query('ALTER TABLE gateway.call DROP COLUMN answered');
    await q.query('ALTER TABLE gateway.call DROP COLUMN life');
  }
}
