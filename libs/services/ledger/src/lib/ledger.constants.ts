export const LEDGER = 'ledger';
export const LEDGER_OPTIONS = Symbol('LEDGER_OPTIONS');
/** The admin token guard's options (`adminTokenProvider`). */
export const LEDGER_ADMIN = Symbol('LEDGER_ADMIN');
