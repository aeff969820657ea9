import { type EntityManager } from 'typeorm';

/**
 * Runs `fn` inside a savepoint of the caller's transaction: true when it succeeded, false when it failed and its writes
 * were rolled back (the transaction goes on without them). For a step whose failure must not undo the rest.
 */
export async function trySavepoint(manager: EntityManager, name: string, fn: () => Promise<void>): Promise<boolean> {
  if (!/^[a-z_]{1,40}$/.test(name)) throw new Error(`not a savepoint name: ${name}`);
  await manager.query(`SAVEPOINT ${name}`);
  try {
    await fn();
  } catch {
    await manager.query(`ROLLBACK TO SAVEPOINT ${name}`);
    return false;
  }
  await manager.query(`RELEASE SAVEPOINT ${name}`);
  return true;
}
