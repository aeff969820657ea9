import { type EntityManager } from 'typeorm';
import { col, defineTable, select } from '@tollgate/persistence';
import { type ProjectionName, SHADOW, tablesOf } from './shadow-tables';

/** One row that differs between the live projection and the rebuilt one (a hash is null where the row is missing). */
/** One column that differs between the live row and the rebuilt one, with both values as PostgreSQL prints them. */
export interface ColumnDiff {
  column: string;
  live: string | null;
  rebuilt: string | null;
}

/** A row that differs: missing on one side (its row is null there), or present on both with the columns that differ. */
export interface ProjectionDiff {
  projection: ProjectionName;
  table: string;
  key: string;
  live: Record<string, string | null> | null;
  rebuilt: Record<string, string | null> | null;
  columns: ColumnDiff[];
}

/** A differing row as the comparison returns it: the key, and each side's columns as text (null: no row there). */
const DIFF_ROW = defineTable('(projection diff)', {
  k: col.text().required(), live: col.jsonb<Record<string, string | null>>().nullable(), rebuilt: col.jsonb<Record<string, string | null>>().nullable(),
});

/** At most this many differing rows are reported per table (the count beyond is what a repair would touch anyway). */
export const MAX_DIFFS_PER_TABLE = 1000;

/**
 * Compares each chosen projection's live and rebuilt tables row by row: every row's key and an MD5 of its compared
 * columns, full-joined on the key; any row missing on either side or hashing differently is a difference, reported
 * with the columns that differ and both values. Rows
 * recorded from a topic replay carry the replay's time, so `ignoreRecordedAt` leaves that column out.
 */
export async function diffProjections(m: EntityManager, projections: readonly ProjectionName[], opts: { ignoreRecordedAt?: boolean } = {}): Promise<ProjectionDiff[]> {
  const diffs: ProjectionDiff[] = [];
  for (const t of tablesOf(projections)) {
    const columns = t.columns.filter((c) => !(opts.ignoreRecordedAt && c === 'recorded_at'));
    // Each side's rows: the key, a hash of the compared columns (the join stays cheap), and the columns as text.
    const side = (schema: string) => `SELECT row(${t.key.join(', ')})::text AS k, md5(row(${columns.join(', ')})::text) AS h,
        jsonb_build_object(${columns.map((c) => `'${c}', ${c}::text`).join(', ')}) AS j FROM ${schema}.${t.table}`;
    const rows = await select(m, DIFF_ROW, ['k', 'live', 'rebuilt'],
      `SELECT k, l.j AS live, s.j AS rebuilt FROM (${side('ledger')}) l FULL JOIN (${side(SHADOW)}) s USING (k)
        WHERE l.h IS DISTINCT FROM s.h ORDER BY k LIMIT ${MAX_DIFFS_PER_TABLE}`);
    for (const r of rows) diffs.push({ projection: t.projection, table: t.table, key: r.k, live: r.live, rebuilt: r.rebuilt, columns: columnDiffs(columns, r.live, r.rebuilt) });
  }
  return diffs;
}

/** The columns whose values differ (every column when the row is missing on one side). */
export function columnDiffs(columns: readonly string[], live: Record<string, string | null> | null, rebuilt: Record<string, string | null> | null): ColumnDiff[] {
  return columns
    .map((column) => ({ column, live: live ? live[column] ?? null : null, rebuilt: rebuilt ? rebuilt[column] ?? null : null }))
    .filter((d) => !live || !rebuilt || d.live !== d.rebuilt);
}
