export const SETTLEMENT = 'settlement';
export const SETTLEMENT_OPTIONS = Symbol('SETTLEMENT_OPTIONS');
export const SETTLEMENT_OUTBOX = Symbol('SETTLEMENT_OUTBOX');
export const SETTLEMENT_ADMIN = Symbol('SETTLEMENT_ADMIN');
