import { type Logger } from 'pino';

/** Anything that runs SQL: a DataSource, an EntityManager or a QueryRunner. */
export interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * How long a service keeps its messaging rows. An outbox row is needed only until the relay has
 * published it (the topic keeps the event for every consumer and for replays); an inbox row only to recognise a
 * redelivery, which comes within the broker's session and rebalance windows — days are a wide margin. Unpublished
 * outbox rows and parked events are never deleted here. The embedded event log is the topic itself: it is kept.
 */
export interface MessagingRetention {
  /** Published outbox rows older than this are deleted. */
  outboxKeepMs: number;
  /** Inbox (deduplication) rows older than this are deleted. */
  inboxKeepMs: number;
  /** How often the pruning runs. */
  intervalMs: number;
}

export const DEFAULT_MESSAGING_RETENTION: MessagingRetention = { outboxKeepMs: 24 * 3_600_000, inboxKeepMs: 7 * 24 * 3_600_000, intervalMs: 3_600_000 };

/** Rows deleted per statement, so a prune never holds long locks or a huge transaction. */
const BATCH = 5000;

/** Deletes in batches until a batch comes back short; returns how many rows went. */
export async function deleteInBatches(db: Queryable, sql: string, parameters: unknown[]): Promise<number> {
  let total = 0;
  for (;;) {
    const result: unknown = await db.query(sql, [...parameters, BATCH]);
    const n = Array.isArray(result) && typeof result[1] === 'number' ? result[1] : 0;
    total += n;
    if (n < BATCH) return total;
  }
}

/** One pass over a service's outbox and inbox. */
export async function pruneMessagingTables(db: Queryable, schema: string, retention: Pick<MessagingRetention, 'outboxKeepMs' | 'inboxKeepMs'>, now = Date.now()): Promise<{ outbox: number; inbox: number }> {
  const outbox = await deleteInBatches(db,
    `DELETE FROM "${schema}".outbox_event WHERE id IN (
       SELECT id FROM "${schema}".outbox_event WHERE published_at IS NOT NULL AND published_at < $1 ORDER BY id LIMIT $2)`,
    [new Date(now - retention.outboxKeepMs)]);
  const inbox = await deleteInBatches(db,
    `DELETE FROM "${schema}".inbox_event WHERE ctid IN (SELECT ctid FROM "${schema}".inbox_event WHERE applied_at < $1 LIMIT $2)`,
    [new Date(now - retention.inboxKeepMs)]);
  return { outbox, inbox };
}

/** Runs `job` every `intervalMs` (first run after one interval or a minute, whichever is sooner); never overlaps itself. */
export function scheduleRetention(name: string, intervalMs: number, job: () => Promise<Record<string, number>>, logger: Logger): { stop(): void } {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const deleted = await job();
      if (Object.values(deleted).some((n) => n > 0)) logger.info({ retention: name, deleted }, 'retention: old rows pruned');
    } catch (err) {
      logger.warn({ err, retention: name }, 'retention pass failed; next pass retries');
    } finally {
      running = false;
    }
  };
  const first = setTimeout(() => void tick(), Math.min(intervalMs, 60_000));
  const every = setInterval(() => void tick(), intervalMs);
  first.unref();
  every.unref();
  return { stop: () => (clearTimeout(first), clearInterval(every)) };
}
