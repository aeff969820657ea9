export * from './lib/wildcard';
export * from './lib/policy-limits';
export * from './lib/policy-document';
export * from './lib/check-args';
export * from './lib/check-sequence';
export * from './lib/policy-decide';
