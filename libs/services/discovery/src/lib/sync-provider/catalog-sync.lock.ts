import { type EntityManager } from 'typeorm';

/** The advisory lock every catalog fold takes for its transaction. */
const CATALOG_SYNC_LOCK = 'discovery-catalog-sync';

/**
 * One catalog sync at a time, whatever started it (registration, a scheduled round, a provider's list_changed): two
 * providers may list the same tool, and two folds side by side would race to insert it or lock its rows in opposite
 * orders. Syncs are rare and short, so serialising them costs nothing an agent sees. Held until the transaction ends.
 */
export async function lockCatalogSync(m: EntityManager): Promise<void> {
  await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [CATALOG_SYNC_LOCK]);
}
