import pino, { type Logger } from 'pino';
import { currentLogContext } from './log-context';

export type { Logger } from 'pino';

/**
 * Structured JSON logs: every line carries `service`, and the `intentId` of
 * the call being handled where there is one (see withLogContext).
 */
export function createLogger(service: string, level = process.env['LOG_LEVEL'] ?? 'info'): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: () => currentLogContext(),
    redact: { paths: ['authorization', '*.authorization', 'credential', '*.credential', 'password', '*.password'], censor: '[redacted]' },
  });
}
