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

const SERVICES: Record<string, (url: string) => DataSourceOptions> = {
  gateway: gatewayDataSourceOptions,
  discovery: discoveryDataSourceOptions,
  execution: executionDataSourceOptions,
  payment: paymentDataSourceOptions,
  settlement: settlementDataSourceOptions,
  ledger: ledgerDataSourceOptions,
};

async function main(): Promise<void> {
  const which = process.argv[2] ?? 'all';
  const url = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/tollgate';
  const names = which === 'all' ? Object.keys(SERVICES) : [which];
  await ensureDatabase(url);
  for (const name of names) {
    const options = SERVICES[name];
    if (!options) throw new Error(`unknown service ${name}; one of ${Object.keys(SERVICES).join(', ')}, all`);
    const ds = await new DataSource(options(url)).initialize();
    try {
      const applied = await migrate(ds);
      process.stdout.write(`${name}: ${applied.length ? applied.join(', ') : 'up to date'}\n`);
    } finally {
      await ds.destroy();
    }
  }
}

main().catch((e) => {
  process.stderr.write(`migrate failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
