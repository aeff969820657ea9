import { readFileSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { envDocsOf } from './env-var.decorator';

/** Boot fails with every bad variable listed at once, never one at a time. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads the variables declared on `cls` from `env`, applies the class's
 * defaults, converts numbers and booleans, and validates the result.
 * Only declared variables are read; everything else in the environment is ignored.
 * Any variable may come from a file instead: `NAME_FILE=/run/secrets/name` (what compose secrets and mounted
 * Kubernetes Secrets give), its content with one trailing newline dropped; setting both is refused.
 */
export function loadConfig<T extends object>(cls: new () => T, env: NodeJS.ProcessEnv = process.env): T {
  const defaults = new cls() as Record<string, unknown>;
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, doc] of envDocsOf(cls)) {
    const value = valueOf(env, key, problems);
    raw[key] = value === undefined || value === '' ? defaults[key] : convert(value, doc.type ?? typeof defaults[key]);
  }
  const instance = plainToInstance(cls, raw, { exposeDefaultValues: true });
  for (const e of validateSync(instance, { forbidUnknownValues: true })) {
    const shown = envDocsOf(cls).get(e.property)?.secret ? '(secret)' : JSON.stringify(e.value);
    problems.push(`${e.property}=${shown}: ${Object.values(e.constraints ?? {}).join(', ')}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return instance;
}

/** One variable outside a configuration class (the ops commands), `NAME_FILE` honoured as by `loadConfig`. */
export function envValue(key: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const problems: string[] = [];
  const value = valueOf(env, key, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return value === '' ? undefined : value;
}

/** A variable's value: from the environment, or from the file its `_FILE` twin names. */
function valueOf(env: NodeJS.ProcessEnv, key: string, problems: string[]): string | undefined {
  const file = env[`${key}_FILE`];
  if (file === undefined || file === '') return env[key];
  if (env[key] !== undefined && env[key] !== '') {
    problems.push(`${key} and ${key}_FILE are both set: keep one`);
    return undefined;
  }
  try {
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (e) {
    problems.push(`${key}_FILE=${JSON.stringify(file)}: cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
}

/** `.env.example` text for one configuration class. */
export function envExampleFor(title: string, cls: new () => object): string {
  const defaults = new cls() as Record<string, unknown>;
  const lines = [`# ---- ${title} ----`];
  for (const [key, doc] of envDocsOf(cls)) {
    lines.push(`# ${doc.description}${doc.secret ? ' (secret)' : ''}`);
    const value = doc.secret ? '' : (doc.example ?? (defaults[key] === undefined ? '' : String(defaults[key])));
    lines.push(`${key}=${value}`);
  }
  return lines.join('\n') + '\n';
}

/** Environment values are strings; numbers and booleans are converted by the declared (or default's) type. */
function convert(value: string, type: string): unknown {
  if (type === 'number') return /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
  if (type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  return value;
}
