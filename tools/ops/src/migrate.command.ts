import { Command, InvalidArgumentError } from 'commander';
import { envValue } from '@tollgate/config';
import { applyMigrations, MIGRATING_SERVICES } from './migrate';

/**
 * `tollgate-ops migrate [service|all]`: what a deployment runs once before the services start (a Kubernetes Job, a
 * one-shot compose service). Each service's migrations run under its schema's advisory lock, so replicas that migrate
 * at start meanwhile take turns; a schema migrated by a newer build is refused before anything runs (exit 1).
 */
export function migrateCommand(): Command {
  return new Command('migrate')
    .description('apply pending migrations (one service, or all) to the database, creating it and the schemas if needed')
    .argument('[service]', `${Object.keys(MIGRATING_SERVICES).join(', ')} or all`, 'all')
    .option('--database-url <url>', 'PostgreSQL URL (default: $DATABASE_URL, or the file $DATABASE_URL_FILE names)')
    .action(async (service: string, o: { databaseUrl?: string }) => {
      if (service !== 'all' && !(service in MIGRATING_SERVICES)) throw new InvalidArgumentError(`unknown service ${service}`);
      const url = o.databaseUrl ?? envValue('DATABASE_URL');
      if (!url) throw new InvalidArgumentError('--database-url (or DATABASE_URL, or DATABASE_URL_FILE) is required');
      for (const line of await applyMigrations(url, service)) process.stdout.write(`${line}\n`);
    });
}
