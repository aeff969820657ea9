export * from './lib/accounts';
export * from './lib/ledger-book';
export * from './lib/postings';
export * from './lib/spend-policy';
export * from './lib/spend-counters';
