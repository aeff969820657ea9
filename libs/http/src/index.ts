export * from './lib/admin-token.guard';
export * from './lib/start-nest-app';
