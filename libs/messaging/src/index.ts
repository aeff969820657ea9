export * from './lib/transport/event-transport';
export * from './lib/transport/in-process.transport';
export * from './lib/transport/kafka.transport';
export * from './lib/outbox/messaging-tables';
export * from './lib/outbox/outbox-writer';
export * from './lib/outbox/outbox-relay';
export * from './lib/inbox/event-consumer';
export * from './lib/service-messaging';
