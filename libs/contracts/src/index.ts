import 'reflect-metadata';
export * from './lib/topics';
export * from './lib/validation';
export * from './lib/money';
export * from './lib/event-definition';
export * from './lib/envelope';
export * from './lib/canonical-json';
export * from './lib/events';
export * from './lib/errors/agent-error';
