import { type DataSource, type EntityManager } from 'typeorm';

/**
 * Two transactions over the same rows at once, as two consumers (or replicas) run them: `first` runs and stays
 * uncommitted while `second` starts in its own transaction; `first` commits `overlapMs` later, then `second` ends.
 * What a missing row lock loses (a lost update) shows in the state both leave.
 */
export async function overlappingTransactions<A, B>(ds: DataSource, first: (m: EntityManager) => Promise<A>, second: (m: EntityManager) => Promise<B>, overlapMs = 200): Promise<[A, B]> {
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    const a = await first(runner.manager);
    const other = ds.transaction(second);
    await new Promise((r) => setTimeout(r, overlapMs));
    await runner.commitTransaction();
    return [a, await other];
  } finally {
    await runner.release();
  }
}
