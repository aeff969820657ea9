import { type EntityManager } from 'typeorm';

/**
 * The ledger's rebuildable projections and the tables that hold them. A replay writes into the same tables in the
 * shadow schema; verify compares them row by row; swap moves the shadow tables into `ledger` and the live ones out to
 * `ledger_retired`, in one transaction.
 */
export type ProjectionName = 'timelines' | 'journal' | 'balances';

export interface ProjectionTable {
  projection: ProjectionName;
  table: string;
  /** The columns that identify a row. */
  key: readonly string[];
  /** The columns compared by verify (generated columns follow from these). */
  columns: readonly string[];
}

export const PROJECTION_TABLES: readonly ProjectionTable[] = [
  { projection: 'timelines', table: 'timeline_entry', key: ['event_id'], columns: ['event_id', 'intent_id', 'type', 'producer', 'topic', 'occurred_at', 'recorded_at', 'payload'] },
  { projection: 'journal', table: 'journal_entry', key: ['posting_id', 'seq'], columns: ['posting_id', 'seq', 'kind', 'intent_id', 'account', 'asset', 'amount', 'occurred_at', 'event_id', 'recorded_at'] },
  { projection: 'balances', table: 'journal_day', key: ['account', 'asset', 'day'], columns: ['account', 'asset', 'day', 'delta'] },
];

export const PROJECTIONS: readonly ProjectionName[] = PROJECTION_TABLES.map((t) => t.projection);
export const SHADOW = 'ledger_replay';
export const RETIRED = 'ledger_retired';

export function tablesOf(projections: readonly ProjectionName[]): ProjectionTable[] {
  return PROJECTION_TABLES.filter((t) => projections.includes(t.projection));
}

type IndexDef = { indexname: string; indexdef: string; primary: boolean; isunique: boolean };

async function liveIndexes(manager: EntityManager, table: string): Promise<IndexDef[]> {
  return manager.query(
    `SELECT i.indexname, i.indexdef, c.contype IS NOT NULL AS primary, i.indexdef LIKE 'CREATE UNIQUE%' AS isunique FROM pg_indexes i
       LEFT JOIN pg_constraint c ON c.conname = i.indexname AND c.contype = 'p' AND c.connamespace = 'ledger'::regnamespace
      WHERE i.schemaname = 'ledger' AND i.tablename = $1`, [table]);
}

async function createIndex(manager: EntityManager, table: string, index: IndexDef): Promise<void> {
  await manager.query(index.indexdef.replace(` ON ledger.${table} `, ` ON ${SHADOW}.${table} `));
  if (index.primary) await manager.query(`ALTER TABLE ${SHADOW}.${table} ADD CONSTRAINT ${index.indexname} PRIMARY KEY USING INDEX ${index.indexname}`);
}

/**
 * An empty shadow copy of every projection table (columns, defaults, generated columns, constraints) with the live
 * table's unique indexes (what makes a replayed event idempotent) under the same names — they live in another schema —
 * so after a swap the live schema looks exactly as its migrations left it. The other indexes come after the load
 * (`indexShadowTables`: one sort each instead of an update per row). Triggers are not copied: the shadow journal keeps
 * its own roll-up until the swap.
 */
export async function createShadowTables(manager: EntityManager): Promise<void> {
  await manager.query(`DROP SCHEMA IF EXISTS ${SHADOW} CASCADE`);
  await manager.query(`CREATE SCHEMA ${SHADOW}`);
  // What the ledger's /metrics reports as the replay's progress (tollgate_figure{name="ledger.replay.events"}).
  await manager.query(`CREATE TABLE ${SHADOW}.progress (events bigint NOT NULL DEFAULT 0, total bigint NOT NULL DEFAULT 0, started_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now())`);
  await manager.query(`INSERT INTO ${SHADOW}.progress DEFAULT VALUES`);
  for (const { table } of PROJECTION_TABLES) {
    await manager.query(`CREATE TABLE ${SHADOW}.${table} (LIKE ledger.${table} INCLUDING DEFAULTS INCLUDING GENERATED INCLUDING CONSTRAINTS)`);
    for (const index of (await liveIndexes(manager, table)).filter((i) => i.isunique)) await createIndex(manager, table, index);
  }
}

/** The live tables' other indexes on the loaded shadow tables (idempotent). */
export async function indexShadowTables(manager: EntityManager): Promise<void> {
  for (const { table } of PROJECTION_TABLES) {
    const present = new Set((await manager.query(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2`, [SHADOW, table])).map((r: { indexname: string }) => r.indexname));
    for (const index of (await liveIndexes(manager, table)).filter((i) => !present.has(i.indexname))) await createIndex(manager, table, index);
  }
}

/**
 * Makes the rebuilt tables live (the caller holds the archive lock and has caught the shadow up): the live tables move
 * to `ledger_retired` (replacing an earlier retired set), the shadow ones into `ledger`, and the journal's roll-up
 * trigger moves with the journal.
 */
export async function swapShadowTables(manager: EntityManager, projections: readonly ProjectionName[]): Promise<void> {
  const tables = tablesOf(projections);
  await manager.query(`LOCK TABLE ${tables.map((t) => `ledger.${t.table}`).join(', ')} IN ACCESS EXCLUSIVE MODE`);
  await manager.query(`CREATE SCHEMA IF NOT EXISTS ${RETIRED}`);
  for (const { table } of tables) {
    await manager.query(`DROP TABLE IF EXISTS ${RETIRED}.${table}`);
    await manager.query(`ALTER TABLE ledger.${table} SET SCHEMA ${RETIRED}`);
    await manager.query(`ALTER TABLE ${SHADOW}.${table} SET SCHEMA ledger`);
  }
  if (projections.includes('journal')) {
    await manager.query(`DROP TRIGGER IF EXISTS journal_day_add ON ${RETIRED}.journal_entry`);
    await manager.query(`CREATE TRIGGER journal_day_add AFTER INSERT ON ledger.journal_entry
      REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION ledger.journal_day_add()`);
  }
}
