export const LEDGER = 'ledger';
export const LEDGER_OPTIONS = Symbol('LEDGER_OPTIONS');
