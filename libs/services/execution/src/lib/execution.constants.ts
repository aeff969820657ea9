export const EXECUTION = 'execution';
export const EXECUTION_OPTIONS = Symbol('EXECUTION_OPTIONS');
export const EXECUTION_OUTBOX = Symbol('EXECUTION_OUTBOX');
