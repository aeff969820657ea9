import { type LoggerService } from '@nestjs/common';
import { type Logger } from 'pino';

/**
 * Nest's own start-up narration — each module initialised, each route mapped, "starting", "started": some 130 lines
 * per start that say nothing an operator acts on. At debug; the services' own lines say when they listen.
 */
const NARRATION = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication']);

/** Routes NestJS's own log lines into the service's logger (its narration at debug, see NARRATION). */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    if (context && NARRATION.has(context)) this.logger.debug({ context }, String(message));
    else this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
