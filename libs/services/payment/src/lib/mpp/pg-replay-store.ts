import type * as MppxCore from 'mppx' with { 'resolution-mode': 'import' };
import { type DataSource, type EntityManager } from 'typeorm';
import { MppReplays } from './mpp-replay.repository';

/**
 * mppx's `Store.AtomicStore` on PostgreSQL (mppx ships none that keeps books), an adapter over `MppReplays`: `update`
 * under a row lock, `tryClaim` as one INSERT — in whichever transaction `db` is (a call's, when claimed with its
 * attempt).
 */
export class PgReplayStore implements MppxCore.Store.AtomicStore {
  constructor(private readonly db: DataSource | EntityManager) {}

  async get(key: string): Promise<never | null> {
    return (await MppReplays.get(this.db, key)) as never;
  }

  put(key: string, value: unknown): Promise<void> {
    return MppReplays.put(this.db, key, value);
  }

  delete(key: string): Promise<void> {
    return MppReplays.delete(this.db, key);
  }

  update: MppxCore.Store.Update = async (key, fn) => {
    const run = async (m: EntityManager) => {
      const change = fn((await MppReplays.get(m, key, true)) as never);
      if (change.op === 'set') await MppReplays.put(m, key, change.value);
      if (change.op === 'delete') await MppReplays.delete(m, key);
      return change.result;
    };
    return 'transaction' in this.db && 'createQueryRunner' in this.db ? this.db.transaction(run) : run(this.db as EntityManager);
  };

  tryClaim(key: string, expires: number): Promise<boolean> {
    return MppReplays.tryClaim(this.db, key, expires);
  }
}
