import { type EntityManager } from 'typeorm';
import { returnedRows } from './service-data-source';

/**
 * Tables declared once: each column's PostgreSQL type and nullability, from which the row's TypeScript type comes.
 * A repository reads its rows through `select` / `rowsOf`, which check every row against the declaration (column
 * present, value of the declared kind) instead of casting with `as`; a medium test per service compares each
 * declaration with what the migrations built (`describeTable`), so a column renamed or retyped on one side fails.
 */

/** The PostgreSQL types in use, as `information_schema.columns.data_type` names them. */
export type PgType = 'uuid' | 'text' | 'jsonb' | 'bigint' | 'integer' | 'boolean' | 'timestamp with time zone' | 'double precision' | 'bytea' | 'date' | 'character varying';

type Scalar<T extends PgType> = T extends 'uuid' | 'text' | 'bigint' | 'character varying' ? string : T extends 'integer' | 'double precision' ? number
  : T extends 'boolean' ? boolean : T extends 'timestamp with time zone' | 'date' ? Date : T extends 'bytea' ? Buffer : unknown;

export interface Column<V = unknown> {
  type: PgType;
  nullable: boolean;
  /** Phantom: the value's TypeScript type. */
  readonly __value?: V;
}

function column<T extends PgType, V = Scalar<T>>(type: T) {
  return {
    /** NOT NULL. */
    required: (): Column<V> => ({ type, nullable: false }),
    nullable: (): Column<V | null> => ({ type, nullable: true }),
  };
}

/** Column builders: `col.uuid().required()`, `col.jsonb<CallState>().required()`, `col.text<'open' | 'settled'>().nullable()`. */
export const col = {
  uuid: () => column('uuid'),
  text: <V extends string = string>() => column<'text', V>('text'),
  bigint: () => column('bigint'),
  integer: () => column('integer'),
  boolean: () => column('boolean'),
  timestamptz: () => column('timestamp with time zone'),
  float: () => column('double precision'),
  jsonb: <V>() => column<'jsonb', V>('jsonb'),
  bytea: () => column('bytea'),
  date: () => column('date'),
  varchar: () => column('character varying'),
};

export interface Table<C extends Record<string, Column>> {
  /** `schema.table`. */
  name: string;
  columns: C;
}

/** A column's value type (null included for a nullable column). */
export type ValueOf<C> = C extends Column<infer V> ? V : never;

export type RowOf<T extends Table<Record<string, Column>>> = { [K in keyof T['columns']]: ValueOf<T['columns'][K]> };

export function defineTable<C extends Record<string, Column>>(name: string, columns: C): Table<C> {
  return { name, columns };
}

/** The kind of JavaScript value pg returns for each type (bigint as a string: it may exceed 2^53). */
const KIND: Record<PgType, (v: unknown) => boolean> = {
  uuid: (v) => typeof v === 'string', text: (v) => typeof v === 'string', bigint: (v) => typeof v === 'string',
  integer: (v) => typeof v === 'number', 'double precision': (v) => typeof v === 'number', boolean: (v) => typeof v === 'boolean',
  'timestamp with time zone': (v) => v instanceof Date, jsonb: (v) => v !== undefined,
  bytea: (v) => Buffer.isBuffer(v), date: (v) => v instanceof Date, 'character varying': (v) => typeof v === 'string',
};

/**
 * Rows of a statement, checked against the declared columns named (a row missing one, or holding a value of another
 * kind, throws: the statement and the declaration disagree — a defect, never data to carry on with).
 */
export function rowsOf<T extends Table<Record<string, Column>>, K extends keyof T['columns'] & string>(table: T, names: readonly K[], result: unknown): Pick<RowOf<T>, K>[] {
  const rows = returnedRows<Record<string, unknown>>(result);
  for (const row of rows) {
    for (const name of names) {
      const c = table.columns[name]!;
      const v = row[name];
      if (v === null ? !c.nullable : !KIND[c.type](v)) throw new Error(`${table.name}.${name}: the row holds ${v === null ? 'null' : typeof v}, declared ${c.type}${c.nullable ? ' null' : ' not null'}`);
    }
  }
  return rows as Pick<RowOf<T>, K>[];
}

/** Runs a statement and returns its rows, checked (see `rowsOf`). */
export async function select<T extends Table<Record<string, Column>>, K extends keyof T['columns'] & string>(
  m: { query(sql: string, parameters?: unknown[]): Promise<unknown> }, table: T, names: readonly K[], sql: string, parameters: unknown[] = [],
): Promise<Pick<RowOf<T>, K>[]> {
  return rowsOf(table, names, await m.query(sql, parameters));
}

/** One service's copy of a table every service has in its own schema (declared with `(service)` for the schema). */
export function inSchema<T extends Table<Record<string, Column>>>(table: T, schema: string): T {
  return { ...table, name: table.name.replace('(service)', schema) };
}

/** What the database holds for a table: each column's type and nullability (for the medium test against migrations). */
export async function describeTable(m: Pick<EntityManager, 'query'>, name: string): Promise<Record<string, { type: string; nullable: boolean }>> {
  const [schema, table] = name.split('.');
  const rows = returnedRows<{ column_name: string; data_type: string; is_nullable: string }>(await m.query(
    'SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2', [schema, table],
  ));
  return Object.fromEntries(rows.map((r) => [r.column_name, { type: r.data_type, nullable: r.is_nullable === 'YES' }]));
}

/** A declaration as `describeTable` reads the database, for comparing the two. */
export function declared(table: Table<Record<string, Column>>): Record<string, { type: string; nullable: boolean }> {
  return Object.fromEntries(Object.entries(table.columns).map(([k, c]) => [k, { type: c.type, nullable: c.nullable }]));
}
