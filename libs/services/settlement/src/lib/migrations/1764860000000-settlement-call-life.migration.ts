import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Settlement's rows keep the call-life model's state (`life`); the columns settlement queries are derived from it on
 * every save. Rows recorded before are given the state their columns describe.
 */
export class SettlementCallLife1764860000000 implements MigrationInterface {
  name = 'SettlementCallLife1764860000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE settlement.verification ADD COLUMN life jsonb');
    await q.query(`
      UPDATE settlement.verification v SET life = jsonb_strip_nulls(jsonb_build_object(
        'intentId', v.intent_id,
        'held', CASE WHEN v.hold_id IS NOT NULL THEN jsonb_build_object('holdId', v.hold_id, 'ownerId', coalesce(v.owner_id, ''),
                  'amount', jsonb_build_object('amountMinor', v.amount_minor::text, 'asset', v.asset), 'free', false) END,
        'attempts', CASE WHEN v.provider_id IS NULL AND v.effect IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('1', jsonb_strip_nulls(jsonb_build_object(
          'dispatched', CASE WHEN v.provider_id IS NOT NULL THEN jsonb_build_object('providerId', v.provider_id) END,
          'confirmed', CASE WHEN v.effect = 'confirmed' THEN jsonb_build_object('method', '', 'providerId', v.provider_id) END,
          'rejected', CASE WHEN v.effect = 'rejected' THEN jsonb_build_object('code', coalesce(v.reason, ''), 'reason', coalesce(v.reason, '')) END))) END))`);
    await q.query('ALTER TABLE settlement.verification ALTER COLUMN life SET NOT NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE settlement.verification DROP COLUMN life');
  }
}
