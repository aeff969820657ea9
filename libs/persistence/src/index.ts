export * from './lib/service-data-source';
export * from './lib/nest/service-database';
export * from './lib/double-entry/double-entry.store';
export * from './lib/channel-listener';
export * from './lib/embedded-postgres';
export * from './lib/lock-call-rows';
export * from './lib/prepared-statements';
export * from './lib/savepoint';
