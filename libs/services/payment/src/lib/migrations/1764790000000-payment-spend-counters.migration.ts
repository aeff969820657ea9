import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Spend and velocity counted per agent in buckets, updated in the hold's transaction, instead of summing
 * today's charges on every call (which grew without bound within a day). Filled from the charges already recorded.
 */
export class PaymentSpendCounters1764790000000 implements MigrationInterface {
  name = 'PaymentSpendCounters1764790000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE payment.spend_counter (
        agent_id text        NOT NULL,
        kind     text        NOT NULL CHECK (kind IN ('day', 'week', 'month', 'minute', 'free')),
        bucket   timestamptz NOT NULL,
        key      text        NOT NULL,
        calls    integer     NOT NULL DEFAULT 0,
        amount   bigint      NOT NULL DEFAULT 0,
        PRIMARY KEY (agent_id, kind, bucket, key)
      )`);
    // The same request repeated: bounded by the repeat rule, found through this index instead of the agent's history.
    await q.query('CREATE INDEX charge_same_request ON payment.charge (agent_id, tool_id, arguments_hash, created_at)');
    const bucketOf: Record<string, string> = {
      day: "date_trunc('day', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
      week: "date_trunc('week', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
      month: "date_trunc('month', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
      minute: "date_trunc('minute', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
    };
    for (const [kind, bucket] of Object.entries(bucketOf)) {
      await q.query(`
        INSERT INTO payment.spend_counter (agent_id, kind, bucket, key, calls, amount)
        SELECT agent_id, '${kind}', ${bucket}, asset, count(*), sum(amount_minor) FROM payment.charge
         WHERE outcome = 'held' AND agent_id <> '' GROUP BY 1, 2, 3, 4`);
    }
    await q.query(`
      INSERT INTO payment.spend_counter (agent_id, kind, bucket, key, calls)
      SELECT agent_id, 'free', ${bucketOf['day']}, tool_id, count(*) FROM payment.charge
       WHERE outcome = 'held' AND free AND agent_id <> '' GROUP BY 1, 2, 3, 4`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX payment.charge_same_request');
    await q.query('DROP TABLE payment.spend_counter');
  }
}
