export const EXECUTION = 'execution';
export const EXECUTION_OPTIONS = Symbol('EXECUTION_OPTIONS');
export const EXECUTION_OUTBOX = Symbol('EXECUTION_OUTBOX');
/** The admin guard reads `adminToken` from here; a random token stands in when none is configured, so nothing passes. */
export const EXECUTION_ADMIN = Symbol('EXECUTION_ADMIN');
