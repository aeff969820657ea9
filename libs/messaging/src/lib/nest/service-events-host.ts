import { type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { type DataSource } from 'typeorm';
import { CALL_EVENT_TYPES, CALL_ROUTE } from '@tollgate/call-life';
import { serviceEventsOf } from '@tollgate/contracts';
import { createLogger, type HealthRegistry, type Logger } from '@tollgate/observability';
import { type EventTransport } from '../transport/event-transport';
import { type EventHandler } from '../inbox/event-consumer';
import { type ConsumerDeclaration, ServiceMessaging } from '../service-messaging';

export interface ServiceEventsSettings {
  service: string;
  schema: string;
  databaseUrl: string;
  pollIntervalMs: number;
  dataSource: DataSource;
  transport: EventTransport;
  health: HealthRegistry;
  logger: Logger;
}

/** The settings every service passes to its host: one schema named after the service, its options and the shared parts. */
export function serviceEventsSettings(
  service: string,
  parts: { dataSource: DataSource; transport: EventTransport; health: HealthRegistry; options: { databaseUrl: string; outboxPollIntervalMs: number } },
): ServiceEventsSettings {
  const { dataSource, transport, health, options } = parts;
  return { service, schema: service, databaseUrl: options.databaseUrl, pollIntervalMs: options.outboxPollIntervalMs, dataSource, transport, health, logger: createLogger(service) };
}

/** A service handles only events it declares it consumes (libs/contracts service-events.ts): boot fails otherwise. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function assertDeclaredConsumers(service: string, consumers: { handlers: EventHandler<any>[] }[]): void {
  const declared = serviceEventsOf(service);
  if (!declared) return;
  const topics = new Set(declared.consumes.map((e) => e.topic));
  const undeclared = consumers.flatMap((c) => c.handlers).filter((h) => !topics.has(h.event.topic)).map((h) => h.event.type);
  if (undeclared.length > 0) throw new Error(`${service} handles events it does not declare it consumes: ${undeclared.join(', ')}`);
}

/**
 * The route is the wiring (CALL_ROUTE): every consumer the route names for this service exists, and each consumer
 * handles exactly the call events its steps read — a call event handled off the route, or a step read by nobody,
 * fails the boot.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function assertRouteWiring(service: string, consumers: { name: string; handlers: EventHandler<any>[] }[]): void {
  const isCallEvent = (t: string) => (CALL_EVENT_TYPES as readonly string[]).includes(t);
  const problems: string[] = [];
  const named = new Set(CALL_ROUTE.filter((s) => s.service === service && s.consumer).map((s) => s.consumer!));
  for (const name of named) if (!consumers.some((c) => c.name === name)) problems.push(`the route's consumer ${name} is missing`);
  for (const c of consumers) {
    const handled = [...new Set(c.handlers.map((h) => h.event.type).filter(isCallEvent))].sort();
    const routed = [...new Set(CALL_ROUTE.filter((s) => s.service === service && s.consumer === c.name).flatMap((s) => s.reads))].sort();
    if (handled.join() !== routed.join()) problems.push(`${c.name} handles ${handled.join(', ') || 'no call event'}; the route has it read ${routed.join(', ') || 'none'}`);
  }
  if (problems.length > 0) throw new Error(`${service} is not wired as the call route says: ${problems.join('; ')}`);
}

/**
 * NestJS lifecycle around a service's ServiceMessaging: starts the outbox
 * relay and the consumers once the app has booted, registers readiness
 * (database + broker), and on shutdown finishes in-flight events and flushes
 * the outbox before the transport closes. Each service subclasses it and
 * lists its handlers; the handlers call that service's use cases.
 */
export abstract class ServiceEventsHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private messaging?: ServiceMessaging;

  protected constructor(private readonly settings: ServiceEventsSettings) {}

  protected abstract consumers(): ConsumerDeclaration[];

  /** Figures of the service's own state for readiness and /metrics (e.g. holds open). */
  protected figures(): { name: string; read(): Promise<number> }[] {
    return [];
  }

  /** Background work the service runs besides consuming (e.g. a sweeper); started after the consumers. */
  protected async startBackground(): Promise<void> {}
  protected async stopBackground(): Promise<void> {}
  /** After the consumers stopped, the commands in flight ended and the outbox was flushed (e.g. closing upstream sessions). */
  protected async afterEventsStopped(): Promise<void> {}

  async onApplicationBootstrap(): Promise<void> {
    const s = this.settings;
    const consumers = this.consumers();
    assertDeclaredConsumers(s.service, consumers);
    assertRouteWiring(s.service, consumers);
    this.messaging = new ServiceMessaging({ ...s, consumers });
    s.health.register({
      name: `${s.service}.database`,
      check: async () => s.dataSource.isInitialized && (await s.dataSource.query('SELECT 1')).length === 1,
    });
    s.health.register({ name: `${s.service}.events`, check: async () => this.messaging?.isReady() ?? false });
    // Which part of `events` is down, in words (reported, not deciding): the outbox relay's LISTEN, the transport, the consumers.
    for (const part of ['relay', 'transport', 'consumers'] as const) {
      s.health.registerStatus({ name: `${s.service}.events.${part}`, read: () => (this.messaging?.readiness()[part] ? 'up' : 'down') });
    }
    s.health.registerFigure({ name: `${s.service}.parkedEvents`, read: async () => this.messaging?.parkedCount() ?? 0 });
    // Events written but not yet published, and how far behind each consumer group is.
    s.health.registerFigure({ name: `${s.service}.outboxBacklog`, read: async () =>
      Number((await s.dataSource.query(`SELECT count(*)::int AS n FROM "${s.schema}".outbox_event WHERE published_at IS NULL`))[0]?.n ?? 0) });
    for (const consumer of this.messaging.consumers) {
      s.health.registerFigure({ name: `${s.service}.consumerLag.${consumer.groupId}`, read: async () =>
        (await s.transport.consumerLag?.([consumer.groupId]))?.[0]?.lag ?? 0 });
    }
    for (const figure of this.figures()) s.health.registerFigure(figure);
    await this.messaging.start();
    await this.startBackground();
    s.logger.info({ driver: s.transport.driver }, 'events started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stopBackground();
    await this.messaging?.stop();
    await this.afterEventsStopped();
    this.settings.logger.info('events stopped, outbox flushed');
  }
}
