import { type DataSource, type EntitySubscriberInterface, type QueryRunner, type TransactionCommitEvent } from 'typeorm';
import { type DeliveredMessage } from './event-transport';
import { type Group, rememberInline } from './log-group';

/**
 * What one transaction appended for the consumers on the critical path, applied right before it commits: each
 * consumer once per round, with everything appended for it so far — a hold's payment and the dispatch that follows it
 * see the request and the hold together, and the gateway folds a result and its effect in one step.
 */
interface InlineWork {
  groups: () => Iterable<Group>;
  delivered: DeliveredMessage[];
  /** How far into `delivered` each group has been offered. */
  offered: Map<Group, number>;
}

const KEY = 'tollgateInlineAtCommit';
const watched = new WeakSet<DataSource>();

function depthOf(runner: QueryRunner): number {
  return (runner as unknown as { transactionDepth?: number }).transactionDepth ?? 1;
}

/** Queues what a transaction just appended for its consumers on the critical path (applied when it is about to commit). */
export function applyAtCommit(runner: QueryRunner, groups: () => Iterable<Group>, delivered: readonly DeliveredMessage[]): void {
  const dataSource = runner.connection;
  if (!watched.has(dataSource)) {
    watched.add(dataSource);
    dataSource.subscribers.push(new InlineAtCommitSubscriber());
  }
  const work = (runner.data[KEY] ??= { groups, delivered: [], offered: new Map() }) as InlineWork;
  work.delivered.push(...delivered);
}

/**
 * The order groups are offered in: fewest inline topics first. A consumer that replies to one kind of request (payment
 * to a call) runs before the ones that fold several facts (execution, the gateway), so these see the reply in the
 * same round — one batch, one savepoint — instead of the request now and the reply in a round of its own.
 */
function offerOrder(groups: Iterable<Group>): Group[] {
  return [...groups].sort((a, b) => (a.options.inlineTopics?.length ?? 0) - (b.options.inlineTopics?.length ?? 0));
}

/**
 * Offers each group what is new for it until nothing new is appended (a consumer's own appends feed the next). A
 * consumer whose savepoint rolled back appended nothing that stands: its messages are dropped from the work.
 */
async function drain(work: InlineWork, runner: QueryRunner): Promise<void> {
  for (let seen = -1; seen !== work.delivered.length;) {
    seen = work.delivered.length;
    for (const g of offerOrder(work.groups())) {
      if (!g.options.applyInline || g.stopped) continue;
      const from = work.offered.get(g) ?? 0;
      const upTo = work.delivered.length;
      work.offered.set(g, upTo);
      const inline = new Set(g.options.inlineTopics ?? []);
      const mine = work.delivered.slice(from, upTo).filter((m) => inline.has(m.topic));
      if (mine.length === 0) continue;
      if (await g.options.applyInline(mine, runner.manager)) rememberInline(g, mine);
      else work.delivered.length = upTo;
    }
  }
}

class InlineAtCommitSubscriber implements EntitySubscriberInterface {
  async beforeTransactionCommit(event: TransactionCommitEvent): Promise<void> {
    const runner = event.queryRunner;
    // A savepoint being released is not the commit: only the outermost transaction drains.
    if (depthOf(runner) !== 1) return;
    const work = runner.data[KEY] as InlineWork | undefined;
    if (!work) return;
    await drain(work, runner);
    delete runner.data[KEY];
  }
}
