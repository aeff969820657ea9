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
 */
export function loadConfig<T extends object>(cls: new () => T, env: NodeJS.ProcessEnv = process.env): T {
  const defaults = new cls() as Record<string, unknown>;
  const raw: Record<string, unknown> = {};
  for (const [key, doc] of envDocsOf(cls)) {
    const value = env[key];
    raw[key] = value === undefined || value === '' ? defaults[key] : convert(value, doc.type ?? typeof defaults[key]);
  }
  const instance = plainToInstance(cls, raw, { exposeDefaultValues: true });
  const errors = validateSync(instance, { forbidUnknownValues: true });
  if (errors.length > 0) {
    throw new ConfigError(
      errors.map((e) => {
        const secret = envDocsOf(cls).get(e.property)?.secret;
        const shown = secret ? '(secret)' : JSON.stringify(e.value);
        return `${e.property}=${shown}: ${Object.values(e.constraints ?? {}).join(', ')}`;
      }),
    );
  }
  return instance;
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
