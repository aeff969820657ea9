import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { currentLogContext } from './log-context';

export type { Logger } from 'pino';

/**
 * How lines are written: `pretty` (one readable line each: time, level, service, message, then the fields) on a
 * terminal, `json` (one JSON object per line, for collectors) when the output is not a terminal — or as LOG_FORMAT says.
 */
export function logFormat(env: NodeJS.ProcessEnv = process.env, isTty = Boolean(process.stdout.isTTY)): 'pretty' | 'json' {
  const asked = env['LOG_FORMAT'];
  if (asked === 'pretty' || asked === 'json') return asked;
  return isTty ? 'pretty' : 'json';
}

let prettyStream: DestinationStream | undefined;

/** One synchronous pretty stream for every logger of the process, so lines never interleave or get lost at exit. */
function prettyDestination(): DestinationStream {
  prettyStream ??= pretty({ sync: true, colorize: Boolean(process.stdout.isTTY), translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,service', messageKey: 'msg', messageFormat: '{service} | {msg}', hideObject: false, singleLine: true });
  return prettyStream;
}

/**
 * Structured logs: every line carries `service`, and the `intentId` of the call being handled where there is one
 * (see withLogContext). Secrets are redacted whatever the format.
 */
export function createLogger(service: string, level = process.env['LOG_LEVEL'] ?? 'info'): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    mixin: () => currentLogContext(),
    redact: { paths: ['authorization', '*.authorization', 'credential', '*.credential', 'password', '*.password'], censor: '[redacted]' },
  };
  return logFormat() === 'pretty' ? pino(options, prettyDestination()) : pino(options);
}
