export * from './lib/accounts';
export * from './lib/ledger-book';
