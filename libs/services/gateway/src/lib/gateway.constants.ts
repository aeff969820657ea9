export const GATEWAY = 'gateway';
export const GATEWAY_OPTIONS = Symbol('GATEWAY_OPTIONS');
export const GATEWAY_OUTBOX = Symbol('GATEWAY_OUTBOX');
