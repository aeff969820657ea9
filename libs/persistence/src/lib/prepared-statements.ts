import { createHash } from 'node:crypto';
import { Client, type ClientConfig } from 'pg';
import { CONNECT_TIMEOUT_MS } from './channel-listener';

/** At most this many statements are kept prepared on one connection; past it, statements run unnamed as before. */
const MAX_PREPARED_PER_CONNECTION = 256;

const names = new Map<string, string>();

/** A statement's name on the wire: from its text, so one text always has one name and two texts never share one. */
function nameOf(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `tg_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * Leads a statement that must be planned on every run, with the values at hand, instead of prepared once: one whose
 * best plan depends on how big a growing table is. A prepared statement settles on a generic plan after five runs and
 * keeps it for the connection's life unless the table is analyzed; one made while the table was small (a sequential
 * scan is cheapest there) then scans the whole table on every run. The ledger's archive check did: 163 ms at 38k rows
 * and 520 ms at 527k rows in the growth run, on a server without autovacuum.
 */
export const PLAN_EACH_RUN = '/* planned on every run */ ';

/**
 * How long a pooled connection lives (seconds): its prepared statements, and the plans PostgreSQL cached for them, go
 * with it. A statement run five times settles on a generic plan, made for the tables as they were then and kept until
 * the table is analyzed; for a table created empty moments before, that is a sequential scan. On a server without
 * autovacuum (this machine's) nothing ever replaces it: the growth run saw the outbox's `WHERE id = ANY($1)` read
 * 9,692 rows to update one (21 ms) — and a busy connection is never idle long enough for the pool to close it. A
 * connection replaced after five minutes plans again for tables of their present size.
 */
export const CONNECTION_LIFETIME_S = 300;

/**
 * A pg client that prepares each parameterised statement once per connection and then only binds and executes it:
 * PostgreSQL parses and plans a statement text once per connection instead of on every call, which is most of the
 * server's work for the short statements of a paid call (measured: ~330 → ~120 µs for a spend-facts-like read). It
 * is given to the pool through TypeORM's `extra.Client`, so repositories, the event log and the consumers all
 * benefit without knowing. Statements without parameters (BEGIN, COMMIT, DDL) and those led by PLAN_EACH_RUN run as
 * before (unnamed: parsed and planned with their values on every run).
 */
export class PreparingClient extends Client {
  private prepared = 0;
  private readonly known = new Set<string>();

  /** A pooled connection is established within CONNECT_TIMEOUT_MS (the pool itself waits for a free one unbounded). */
  constructor(config?: string | ClientConfig) {
    super(typeof config === 'string' ? { connectionString: config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS } : { connectionTimeoutMillis: CONNECT_TIMEOUT_MS, ...config });
  }

  // pg's own overloads are many; this forwards every shape unchanged except (text, values[]).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && !config.startsWith(PLAN_EACH_RUN)) {
      const name = nameOf(config);
      if (this.known.has(name) || this.prepared < MAX_PREPARED_PER_CONNECTION) {
        if (!this.known.has(name)) {
          this.known.add(name);
          this.prepared++;
        }
        return super.query({ name, text: config, values }, callback);
      }
    }
    return super.query(config, values, callback);
  }
}
