export * from './lib/upstream-client';
