import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The call's end of the money is now a fact of its state (the refund or settlement settlement emitted, folded in),
 * and `state` is derived from it on save. Rows closed before keep their end in `state` only: it is written into the
 * state here, so the model and the column agree for every row.
 */
export class SettlementLifeEnds1764940000000 implements MigrationInterface {
  name = 'SettlementLifeEnds1764940000000';

  async up(q: QueryRunner): Promise<void> {
    const amount = (column: string) => `jsonb_build_object('amountMinor', ${column}::text, 'asset', asset)`;
    await q.query(`UPDATE settlement.verification SET life = life || jsonb_build_object('settled',
        jsonb_build_object('holdId', hold_id, 'providerId', provider_id, 'amount', ${amount('amount_minor')})
        || CASE WHEN fee_minor IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('fee', ${amount('fee_minor')}, 'providerNet', ${amount('net_minor')}) END)
      WHERE state = 'settled' AND NOT life ? 'settled'`);
    await q.query(`UPDATE settlement.verification SET life = life || jsonb_build_object('refunded',
        jsonb_build_object('holdId', hold_id, 'amount', ${amount('amount_minor')}, 'reason', coalesce(reason, '')))
      WHERE state = 'refunded' AND NOT life ? 'refunded'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE settlement.verification SET life = life - 'settled' - 'refunded'`);
  }
}
