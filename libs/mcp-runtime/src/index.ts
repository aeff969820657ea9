export * from './lib/upstream-client';
export * from './lib/upstream-failures';
export * from './lib/contract-hash';
export * from './lib/upstream-credentials';
export * from './lib/settlement-overrides';
