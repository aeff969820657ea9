import { type DataSource, type EntitySubscriberInterface, type QueryRunner, type TransactionCommitEvent, type TransactionRollbackEvent } from 'typeorm';

/** What a transaction appended, to be handed on once (and only if) it commits. */
export interface PendingHandOff {
  /** The transaction depth it was appended at (a rolled-back savepoint drops what it appended). */
  depth: number;
  deliver(): void;
}

const KEY = 'tollgateLogHandOff';
const watched = new WeakSet<DataSource>();

function depthOf(runner: QueryRunner): number {
  return (runner as unknown as { transactionDepth?: number }).transactionDepth ?? 1;
}

/**
 * Runs `deliver` right after the transaction of `runner` commits: the embedded log hands the
 * events a transaction appended to the consumers in this process without waiting for NOTIFY and a read. Nothing
 * is handed on for a transaction that rolls back, or for what a rolled-back savepoint appended.
 */
export function afterCommit(runner: QueryRunner, deliver: () => void): void {
  const dataSource = runner.connection;
  if (!watched.has(dataSource)) {
    watched.add(dataSource);
    dataSource.subscribers.push(new CommitHandOffSubscriber());
  }
  const pending = (runner.data[KEY] ??= []) as PendingHandOff[];
  pending.push({ depth: depthOf(runner), deliver });
}

/** How many hand-offs the transaction has so far (see `dropHandOffsSince`). */
export function handOffMark(runner: QueryRunner): number {
  return ((runner.data[KEY] ?? []) as PendingHandOff[]).length;
}

/** Drops the hand-offs registered after `mark`: work undone by a savepoint TypeORM does not know of (see `drain`). */
export function dropHandOffsSince(runner: QueryRunner, mark: number): void {
  const pending = runner.data[KEY] as PendingHandOff[] | undefined;
  if (pending) pending.length = Math.min(pending.length, mark);
}

class CommitHandOffSubscriber implements EntitySubscriberInterface {
  afterTransactionCommit(event: TransactionCommitEvent): void {
    const runner = event.queryRunner;
    if (runner.isTransactionActive) {
      // A released savepoint is not a commit: the outer transaction may still roll back, and what was appended inside
      // the savepoint now belongs to the level it was released into.
      const depth = depthOf(runner);
      for (const p of (runner.data[KEY] ?? []) as PendingHandOff[]) p.depth = Math.min(p.depth, depth);
      return;
    }
    const pending = (runner.data[KEY] ?? []) as PendingHandOff[];
    delete runner.data[KEY];
    for (const p of pending) {
      try {
        p.deliver();
      } catch {
        // The transaction has committed: a failing hand-off must not turn it into an error (NOTIFY still delivers).
      }
    }
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    const runner = event.queryRunner;
    if (!runner.isTransactionActive) {
      delete runner.data[KEY];
      return;
    }
    const depth = depthOf(runner);
    runner.data[KEY] = ((runner.data[KEY] ?? []) as PendingHandOff[]).filter((p) => p.depth <= depth);
  }
}
