import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { createDoubleEntryTables, dropDoubleEntryTables } from '@tollgate/persistence';

/**
 * Wallets as double-entry accounts (balance, posting, entry: see
 * createDoubleEntryTables), deposits, spend policies, approvals, x402 nonces.
 */
export class PaymentWallets1764750000000 implements MigrationInterface {
  name = 'PaymentWallets1764750000000';

  async up(q: QueryRunner): Promise<void> {
    await createDoubleEntryTables(q, 'payment', ['deposit', 'hold', 'capture', 'void', 'chargeback']);
    await q.query(`
      CREATE TABLE payment.deposit (
        deposit_id   uuid PRIMARY KEY,
        reference    text NOT NULL UNIQUE,
        owner_id     text NOT NULL,
        source       text NOT NULL,
        amount_minor bigint NOT NULL CHECK (amount_minor > 0),
        asset        text NOT NULL,
        charged_back_at timestamptz,
        created_at   timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE payment.spend_policy (
        owner_id   text NOT NULL,
        agent_id   text NOT NULL,
        paused     boolean NOT NULL DEFAULT false,
        spend_limit_minor bigint CHECK (spend_limit_minor >= 0),
        period     text NOT NULL DEFAULT 'day' CHECK (period IN ('day', 'week', 'month')),
        approval_threshold_minor bigint CHECK (approval_threshold_minor >= 0),
        asset      text NOT NULL DEFAULT 'USDC',
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (owner_id, agent_id)
      )`);
    // One row per CallRequested payment decided on: quota, spend-in-period and velocity are counted from it.
    await q.query(`
      CREATE TABLE payment.charge (
        intent_id      uuid PRIMARY KEY,
        owner_id       text NOT NULL,
        agent_id       text NOT NULL,
        tool_id        text NOT NULL,
        arguments_hash text NOT NULL,
        amount_minor   bigint NOT NULL,
        asset          text NOT NULL,
        free           boolean NOT NULL DEFAULT false,
        outcome        text NOT NULL CHECK (outcome IN ('held', 'rejected')),
        code           text,
        created_at     timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX charge_agent_time ON payment.charge (agent_id, created_at)');
    // The charge row records refusals too (outcome 'rejected', code): the earlier rejection table would say it twice.
    await q.query('INSERT INTO payment.charge (intent_id, owner_id, agent_id, tool_id, arguments_hash, amount_minor, asset, outcome, code, created_at) '
      + "SELECT intent_id, '', '', '', '', 0, '', 'rejected', code, created_at FROM payment.rejection");
    await q.query('DROP TABLE payment.rejection');
    await q.query(`
      CREATE TABLE payment.approval (
        approval_id    uuid PRIMARY KEY,
        owner_id       text NOT NULL,
        agent_id       text NOT NULL,
        tool_id        text NOT NULL,
        arguments_hash text NOT NULL,
        operation_key  text,
        amount_minor   bigint NOT NULL,
        asset          text NOT NULL,
        status         text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'used')),
        decided_by     text,
        decided_at     timestamptz,
        used_by_intent uuid,
        created_at     timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX approval_open_request ON payment.approval (agent_id, tool_id, arguments_hash, COALESCE(operation_key, '')) WHERE status IN ('pending', 'approved')`);
    // x402: a payment authorization's nonce is spent once, whatever happens to the call.
    await q.query(`
      CREATE TABLE payment.x402_nonce (
        network    text NOT NULL,
        payer      text NOT NULL,
        nonce      text NOT NULL,
        intent_id  uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (network, payer, nonce)
      )`);
    await q.query(`ALTER TABLE payment.hold ADD COLUMN captured_minor bigint`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE payment.hold DROP COLUMN captured_minor');
    await q.query('CREATE TABLE payment.rejection (intent_id uuid PRIMARY KEY, code text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
    await q.query(`INSERT INTO payment.rejection (intent_id, code, created_at) SELECT intent_id, code, created_at FROM payment.charge WHERE outcome = 'rejected'`);
    for (const t of ['x402_nonce', 'approval', 'charge', 'spend_policy', 'deposit']) await q.query(`DROP TABLE payment.${t}`);
    await dropDoubleEntryTables(q, 'payment');
  }
}
