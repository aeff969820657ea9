import { type EntityManager } from 'typeorm';
import { select } from '@tollgate/persistence';
import { PROVIDER, PROVIDER_COLUMNS, type ProviderRow } from '../catalog/catalog-tables';

export { type ProviderRow } from '../catalog/catalog-tables';

export type ProviderConnection = Pick<ProviderRow, 'provider_id' | 'transport' | 'endpoint' | 'command' | 'args' | 'defaults'>;

type Executor = Pick<EntityManager, 'query'>;

/** The admin API's statements on `discovery.provider` (the sync keeps its own beside it). */
export const Providers = {
  /** A provider registered, or its connection replaced. */
  async save(m: Executor, p: ProviderConnection): Promise<void> {
    await m.query(
      `INSERT INTO discovery.provider (provider_id, transport, endpoint, command, args, defaults) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (provider_id) DO UPDATE SET transport = EXCLUDED.transport, endpoint = EXCLUDED.endpoint, command = EXCLUDED.command,
         args = EXCLUDED.args, defaults = EXCLUDED.defaults`,
      [p.provider_id, p.transport, p.endpoint, p.command, p.args === null ? null : JSON.stringify(p.args), JSON.stringify(p.defaults)],
    );
  },

  /** Every provider, by id. */
  async all(m: Executor): Promise<ProviderRow[]> {
    return select(m, PROVIDER, PROVIDER_COLUMNS, 'SELECT * FROM discovery.provider ORDER BY provider_id');
  },
};
