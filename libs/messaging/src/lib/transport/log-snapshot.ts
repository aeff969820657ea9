/**
 * A PostgreSQL snapshot (`pg_snapshot`, text form `xmin:xmax:xip,…`) used as a consumer group's position in the
 * embedded event log: every row written by a transaction visible in the snapshot has been delivered. Unlike a
 * transaction-id watermark, a snapshot names the transactions still running one by one, so a long or idle
 * transaction elsewhere in the database holds back nothing but its own rows.
 */
export interface LogSnapshot {
  /** Every transaction below it had ended when the snapshot was taken. */
  xmin: bigint;
  /** No transaction at or above it had ended. */
  xmax: bigint;
  /** The transactions in [xmin, xmax) still running then. */
  xip: readonly bigint[];
  text: string;
}

const SNAPSHOT_TEXT = /^(\d+):(\d+):((?:\d+(?:,\d+)*)?)$/;

export function parseSnapshot(text: string): LogSnapshot {
  const m = SNAPSHOT_TEXT.exec(text);
  if (!m) throw new Error(`not a pg_snapshot: ${JSON.stringify(text)}`);
  return { xmin: BigInt(m[1]!), xmax: BigInt(m[2]!), xip: m[3] ? m[3].split(',').map(BigInt) : [], text };
}

/** Whether the transaction's writes were visible in the snapshot (the same rule as `pg_visible_in_snapshot`). */
export function isVisible(txid: bigint, s: LogSnapshot): boolean {
  if (txid < s.xmin) return true;
  if (txid >= s.xmax) return false;
  return !s.xip.includes(txid);
}

/** The position of a group saved before positions were snapshots (`txid`, row id): its whole last transaction is read again if it was cut mid-way. */
export function snapshotFromLegacy(txid: bigint, id: bigint, maxId: bigint): LogSnapshot {
  const bound = id === maxId ? txid + 1n : txid;
  return parseSnapshot(`${bound}:${bound}:`);
}

/**
 * SQL: row `e` of `eventlog.event` is not covered by the saved position `p` of `eventlog.position` (lag figures). The
 * first conjunct holds for both kinds of position and lets PostgreSQL read only the recent rows through the (txid, id)
 * index; without it a lag figure counted the whole log.
 */
export const NOT_COVERED_SQL = `(e.txid >= coalesce(pg_snapshot_xmin(p.snapshot), p.txid) AND CASE WHEN p.snapshot IS NULL THEN (e.txid, e.id) > (p.txid, p.id)
  ELSE NOT pg_visible_in_snapshot(e.txid, p.snapshot) END)`;
