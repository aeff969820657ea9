import { type EntityManager } from 'typeorm';
import { type ProjectionName, SHADOW, tablesOf } from './shadow-tables';

/** One row that differs between the live projection and the rebuilt one (a hash is null where the row is missing). */
export interface ProjectionDiff {
  projection: ProjectionName;
  table: string;
  key: string;
  live: string | null;
  rebuilt: string | null;
}

/**
 * Compares each chosen projection's live and rebuilt tables row by row: every row's key and an MD5 of its compared
 * columns, full-joined on the key; any row missing on either side or hashing differently is a difference. Rows
 * recorded from a topic replay carry the replay's time, so `ignoreRecordedAt` leaves that column out.
 */
export async function diffProjections(m: EntityManager, projections: readonly ProjectionName[], opts: { ignoreRecordedAt?: boolean } = {}): Promise<ProjectionDiff[]> {
  const diffs: ProjectionDiff[] = [];
  for (const t of tablesOf(projections)) {
    const columns = t.columns.filter((c) => !(opts.ignoreRecordedAt && c === 'recorded_at'));
    const hashed = (schema: string) => `SELECT row(${t.key.join(', ')})::text AS k, md5(row(${columns.join(', ')})::text) AS h FROM ${schema}.${t.table}`;
    const rows: { k: string; live: string | null; rebuilt: string | null }[] = await m.query(
      `SELECT k, l.h AS live, s.h AS rebuilt FROM (${hashed('ledger')}) l FULL JOIN (${hashed(SHADOW)}) s USING (k)
        WHERE l.h IS DISTINCT FROM s.h ORDER BY k`);
    for (const r of rows) diffs.push({ projection: t.projection, table: t.table, key: r.k, live: r.live, rebuilt: r.rebuilt });
  }
  return diffs;
}
