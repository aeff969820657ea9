/** Applies pending migrations for one service (or `all`) to DATABASE_URL, creating the database and schema if needed. */
import 'reflect-metadata';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { ensureDatabase, migrate } from '@tollgate/persistence';
import { discoveryDataSourceOptions } from '@tollgate/discovery-service';
import { executionDataSourceOptions } from '@tollgate/execution-service';
import { gatewayDataSourceOptions } from '@tollgate/gateway-service';
import { ledgerDataSourceOptions } from '@tollgate/ledger-service';
import { paymentDataSourceOptions } from '@tollgate/payment-service';
import { settlementDataSourceOptions } from '@tollgate/settlement-service';

/** Every service that owns a schema, with its DataSource options. */
export const MIGRATING_SERVICES: Record<string, (url: string) => DataSourceOptions> = {
  gateway: gatewayDataSourceOptions,
  discovery: discoveryDataSourceOptions,
  execution: executionDataSourceOptions,
  payment: paymentDataSourceOptions,
  settlement: settlementDataSourceOptions,
  ledger: ledgerDataSourceOptions,
};

/** Applies the pending migrations of one service (or `all`); a line per service saying what was applied. */
export async function applyMigrations(url: string, which = 'all'): Promise<string[]> {
  const names = which === 'all' ? Object.keys(MIGRATING_SERVICES) : [which];
  await ensureDatabase(url);
  const lines: string[] = [];
  for (const name of names) {
    const options = MIGRATING_SERVICES[name];
    if (!options) throw new Error(`unknown service ${name}; one of ${Object.keys(MIGRATING_SERVICES).join(', ')}, all`);
    const ds = await new DataSource(options(url)).initialize();
    try {
      const applied = await migrate(ds);
      lines.push(`${name}: ${applied.length ? applied.join(', ') : 'up to date'}`);
    } finally {
      await ds.destroy();
    }
  }
  return lines;
}

if (require.main === module) {
  applyMigrations(process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/tollgate', process.argv[2] ?? 'all').then(
    (lines) => process.stdout.write(lines.map((l) => `${l}\n`).join('')),
    (e) => {
      process.stderr.write(`migrate failed: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    });
}
