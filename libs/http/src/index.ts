export * from './lib/admin-token.guard';
export * from './lib/start-nest-app';
export * from './lib/outbound/outbound-policy';
export * from './lib/outbound/fetch-limited';
