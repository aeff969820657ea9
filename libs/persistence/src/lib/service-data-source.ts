import { DataSource, type DataSourceOptions, type MixedList, type EntitySchema } from 'typeorm';
import { Client } from 'pg';
import { CONNECTION_SAFETY } from './channel-listener';
import { CONNECTION_LIFETIME_S, PreparingClient } from './prepared-statements';

export interface ServiceDataSourceSpec {
  /** Connection name; one per service, so several services can share one process (embedded mode). */
  name: string;
  /** The PostgreSQL schema the service owns. No other service reads it. */
  schema: string;
  url: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function | string>;
  poolSize?: number;
  /** Seconds a pooled connection lives (its prepared statements' plans with it); CONNECTION_LIFETIME_S unless set. */
  connectionLifetimeS?: number;
}

/**
 * The one set of DataSource options for a service, used by its NestJS module,
 * by the TypeORM CLI (through the service's `*.datasource.ts`) and by tests.
 * Schema changes only ever happen through migrations.
 */
export function serviceDataSourceOptions(spec: ServiceDataSourceSpec): DataSourceOptions {
  return {
    type: 'postgres',
    url: spec.url,
    schema: spec.schema,
    entities: spec.entities,
    migrations: spec.migrations,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    // PreparingClient: each parameterised statement is parsed and planned once per connection (prepared-statements.ts),
    // which is replaced after a while so that those plans follow the tables' growth.
    extra: {
      max: spec.poolSize ?? 10, application_name: `tollgate-${spec.name}`, Client: PreparingClient, ...CONNECTION_SAFETY,
      maxLifetimeSeconds: spec.connectionLifetimeS ?? CONNECTION_LIFETIME_S,
    },
  };
}

/** Connects, creates the service's schema if needed and applies pending migrations. */
export async function openServiceDataSource(options: DataSourceOptions): Promise<DataSource> {
  const ds = new DataSource(options);
  await ds.initialize();
  try {
    await migrate(ds);
  } catch (e) {
    await ds.destroy();
    throw e;
  }
  return ds;
}

/** The migrations table of a schema holds names this build does not know: the database was migrated by a newer one. */
export class SchemaAheadError extends Error {}

/**
 * Applies the pending migrations of one service, under a session advisory lock on the service's schema: replicas
 * started together (or a `migrate` Job beside them) take turns, so each migration runs once and the others find
 * nothing pending. A schema already ahead of this build (migrations it does not know) is refused with a clear message
 * before anything runs: a rolled-back deployment never runs old code on a newer schema.
 */
export async function migrate(ds: DataSource): Promise<string[]> {
  const schema = (ds.options as { schema?: string }).schema ?? 'public';
  const lock = ds.createQueryRunner();
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [`tollgate-migrations:${schema}`]);
    await ds.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await refuseSchemaAhead(ds, schema);
    const applied = await ds.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await lock.query('SELECT pg_advisory_unlock(hashtext($1))', [`tollgate-migrations:${schema}`]).catch(() => undefined);
    await lock.release();
  }
}

async function refuseSchemaAhead(ds: DataSource, schema: string): Promise<void> {
  const [table] = (await ds.query('SELECT to_regclass($1) IS NOT NULL AS present', [`"${schema}".migrations`])) as { present: boolean }[];
  if (!table?.present) return;
  const known = new Set(ds.migrations.map((m) => m.name ?? m.constructor.name));
  const applied = ((await ds.query(`SELECT name FROM "${schema}".migrations ORDER BY id`)) as { name: string }[]).map((r) => r.name);
  const unknown = applied.filter((n) => !known.has(n));
  if (unknown.length > 0) {
    throw new SchemaAheadError(`the "${schema}" schema was migrated by a newer build (${unknown.join(', ')} unknown here): run that build, `
      + 'or restore the database to this build\'s schema; nothing was changed');
  }
}

/** Creates the database named in `url` if it does not exist (for CI, tests and first runs). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`refusing to create database with unusual name ${JSON.stringify(name)}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name}"`).catch((e: { code?: string }) => {
        if (e.code !== '42P04') throw e; // created concurrently by another process
      });
    }
  } finally {
    await client.end();
  }
}

export async function dropDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/**
 * Rows of a raw `UPDATE/DELETE ... RETURNING` through TypeORM, which returns
 * `[rows, affectedCount]` for those statements but plain rows for SELECT/INSERT.
 */
export function returnedRows<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
  return result as T[];
}
