import { type DataSource, type EntitySubscriberInterface, type QueryRunner, type TransactionCommitEvent, type TransactionRollbackEvent } from 'typeorm';
import { type DeliveredMessage, type InlineMode, type TransportMessage } from './event-transport';
import { dropHandOffsSince, handOffMark } from './commit-hand-off';
import { type Group, rememberInline } from './log-group';

/** The embedded log as the commit of one of its writers' transactions sees it (the transport implements it). */
export interface CommitLog {
  groups(): Iterable<Group>;
  /** Writes a transaction's appends in one statement right before it commits, and sets each message's offset in place. */
  write(runner: QueryRunner, messages: DeliveredMessage[]): Promise<void>;
}

/** A message appended at some transaction depth: a savepoint rolled back drops what was appended inside it. */
interface Appended { depth: number; message: DeliveredMessage }

/**
 * What one transaction appended so far, written when it is about to commit: first each consumer on the critical path
 * is offered what is new for it (a hold's payment and the dispatch that follows it see the request and the hold
 * together, and the gateway folds a result and its effect in one step), then everything that stands is appended to
 * the log in one statement.
 */
interface CommitWork {
  log: CommitLog;
  appended: Appended[];
  /** How far into `appended` each group has been offered. */
  offered: Map<Group, number>;
  /** What each consumer applied inline: remembered (by offset) once the write has given the messages theirs. */
  applied: Array<[Group, DeliveredMessage[]]>;
}

const KEY = 'tollgateAppendAtCommit';
/**
 * A message's offset until the log has written it: what a consumer applying it inline sees (an inbox row says the
 * event was applied inside its producer's transaction; the offset is informational there, ids are what deduplicate).
 */
const NOT_WRITTEN = 'inline';
const watched = new WeakSet<DataSource>();

function depthOf(runner: QueryRunner): number {
  return (runner as unknown as { transactionDepth?: number }).transactionDepth ?? 1;
}

/** Queues messages a transaction appends: offered to its inline consumers and written to the log when it commits. */
export function appendAtCommit(runner: QueryRunner, log: CommitLog, messages: readonly TransportMessage[]): void {
  const dataSource = runner.connection;
  if (!watched.has(dataSource)) {
    watched.add(dataSource);
    dataSource.subscribers.push(new AppendAtCommitSubscriber());
  }
  const work = (runner.data[KEY] ??= { log, appended: [], offered: new Map(), applied: [] }) as CommitWork;
  const depth = depthOf(runner);
  for (const m of messages) work.appended.push({ depth, message: { topic: m.topic, key: m.key, value: m.value, headers: m.headers ?? {}, partition: 0, offset: NOT_WRITTEN } });
}

/**
 * The order groups are offered in: fewest inline topics first. A consumer that replies to one kind of request (payment
 * to a call) runs before the ones that fold several facts (execution, the gateway), so these see the reply in the
 * same round instead of the request now and the reply in a round of its own.
 */
function offerOrder(groups: Iterable<Group>): Group[] {
  return [...groups].sort((a, b) => (a.options.inlineTopics?.length ?? 0) - (b.options.inlineTopics?.length ?? 0));
}

/** Offers each group what is new for it until nothing new is appended (a consumer's own appends feed the next). */
async function offer(work: CommitWork, runner: QueryRunner, mode: InlineMode, before: () => Promise<void>): Promise<void> {
  for (let seen = -1; seen !== work.appended.length;) {
    seen = work.appended.length;
    for (const g of offerOrder(work.log.groups())) {
      if (!g.options.applyInline || g.stopped) continue;
      const from = work.offered.get(g) ?? 0;
      const upTo = work.appended.length;
      work.offered.set(g, upTo);
      const inline = new Set(g.options.inlineTopics ?? []);
      const mine = work.appended.slice(from, upTo).map((a) => a.message).filter((m) => inline.has(m.topic));
      if (mine.length === 0) continue;
      await before();
      if (await g.options.applyInline(mine, runner.manager, mode)) work.applied.push([g, mine]);
    }
  }
}

/** The savepoint the consumers' inline work shares (taken by hand: TypeORM's would cost a RELEASE per commit). */
const SHARED_SAVEPOINT = 'tollgate_inline';

/**
 * The consumers' inline work, under one savepoint for all of them: one statement per transaction, not a SAVEPOINT and
 * a RELEASE per consumer (COMMIT releases it). Should any of them fail, the transaction goes back to the savepoint —
 * the producer's facts stand, and what the consumers appended or scheduled after commit is dropped — and they are
 * offered again each under a savepoint of its own, so one failing consumer leaves only its own messages to the normal
 * delivery.
 */
async function drain(work: CommitWork, runner: QueryRunner): Promise<void> {
  const mark = { appended: work.appended.length, handOffs: handOffMark(runner) };
  let opened = false;
  const open = async () => {
    if (opened) return;
    await runner.query(`SAVEPOINT ${SHARED_SAVEPOINT}`);
    opened = true;
  };
  try {
    await offer(work, runner, 'together', open);
  } catch {
    if (opened) await runner.query(`ROLLBACK TO SAVEPOINT ${SHARED_SAVEPOINT}`);
    work.appended.length = mark.appended;
    dropHandOffsSince(runner, mark.handOffs);
    work.offered.clear();
    work.applied.length = 0;
    await offer(work, runner, 'each', () => Promise.resolve());
  }
}

class AppendAtCommitSubscriber implements EntitySubscriberInterface {
  async beforeTransactionCommit(event: TransactionCommitEvent): Promise<void> {
    const runner = event.queryRunner;
    // A savepoint being released is not the commit: only the outermost transaction drains and writes.
    if (depthOf(runner) !== 1) return;
    const work = runner.data[KEY] as CommitWork | undefined;
    if (!work) return;
    await drain(work, runner);
    delete runner.data[KEY];
    const messages = work.appended.map((a) => a.message);
    if (messages.length === 0) return;
    await work.log.write(runner, messages);
    for (const [g, applied] of work.applied) rememberInline(g, applied);
  }

  /** A released savepoint's appends now belong to the level it was released into. */
  afterTransactionCommit(event: TransactionCommitEvent): void {
    const runner = event.queryRunner;
    const work = runner.data[KEY] as CommitWork | undefined;
    if (!work || !runner.isTransactionActive) return;
    const depth = depthOf(runner);
    for (const a of work.appended) a.depth = Math.min(a.depth, depth);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    const runner = event.queryRunner;
    const work = runner.data[KEY] as CommitWork | undefined;
    if (!work) return;
    if (!runner.isTransactionActive) {
      delete runner.data[KEY];
      return;
    }
    const depth = depthOf(runner);
    work.appended = work.appended.filter((a) => a.depth <= depth);
    for (const [g, n] of work.offered) work.offered.set(g, Math.min(n, work.appended.length));
  }
}
