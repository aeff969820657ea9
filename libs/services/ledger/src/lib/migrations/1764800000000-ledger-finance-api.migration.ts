import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The journal as finance queries it. Each entry keeps its effective time (`occurred_at`, when the
 * money moved) apart from when the ledger recorded it (`recorded_at`); the owner or provider an account belongs to is
 * a generated column, for filters. `journal_day` holds each account's net movement per UTC day, maintained in the same
 * statement as every insert (a statement trigger over the inserted rows only), so a balance as of any time reads the
 * days before it plus the entries of that one day — not the whole history.
 */
export class LedgerFinanceApi1764800000000 implements MigrationInterface {
  name = 'LedgerFinanceApi1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ledger.journal_entry
      ADD COLUMN recorded_at timestamptz NOT NULL DEFAULT now(),
      ADD COLUMN owner_id text GENERATED ALWAYS AS (CASE WHEN account LIKE 'owner:%' THEN split_part(account, ':', 2) END) STORED,
      ADD COLUMN provider_id text GENERATED ALWAYS AS (CASE WHEN account LIKE 'provider:%' THEN split_part(account, ':', 2) END) STORED`);
    await q.query('CREATE INDEX journal_entry_order ON ledger.journal_entry (occurred_at, posting_id, seq)');
    await q.query('CREATE INDEX journal_entry_owner ON ledger.journal_entry (owner_id, occurred_at) WHERE owner_id IS NOT NULL');
    await q.query('CREATE INDEX journal_entry_provider ON ledger.journal_entry (provider_id, occurred_at) WHERE provider_id IS NOT NULL');
    await q.query('CREATE INDEX journal_entry_intent ON ledger.journal_entry (intent_id) WHERE intent_id IS NOT NULL');
    await q.query(`
      CREATE TABLE ledger.journal_day (
        account text NOT NULL,
        asset   text NOT NULL,
        day     date NOT NULL,
        delta   bigint NOT NULL,
        PRIMARY KEY (account, asset, day)
      )`);
    await q.query(`
      CREATE FUNCTION ledger.journal_day_add() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ledger.journal_day (account, asset, day, delta)
          SELECT account, asset, (occurred_at AT TIME ZONE 'UTC')::date, sum(amount) FROM inserted GROUP BY 1, 2, 3
          ON CONFLICT (account, asset, day) DO UPDATE SET delta = ledger.journal_day.delta + EXCLUDED.delta;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER journal_day_add AFTER INSERT ON ledger.journal_entry
      REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION ledger.journal_day_add()`);
    await q.query(`INSERT INTO ledger.journal_day (account, asset, day, delta)
      SELECT account, asset, (occurred_at AT TIME ZONE 'UTC')::date, sum(amount) FROM ledger.journal_entry GROUP BY 1, 2, 3`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER journal_day_add ON ledger.journal_entry');
    await q.query('DROP FUNCTION ledger.journal_day_add()');
    await q.query('DROP TABLE ledger.journal_day');
    for (const i of ['journal_entry_order', 'journal_entry_owner', 'journal_entry_provider', 'journal_entry_intent']) await q.query(`DROP INDEX ledger.${i}`);
    await q.query('ALTER TABLE ledger.journal_entry DROP COLUMN recorded_at, DROP COLUMN owner_id, DROP COLUMN provider_id');
  }
}
