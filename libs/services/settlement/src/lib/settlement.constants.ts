export const SETTLEMENT = 'settlement';
export const SETTLEMENT_OPTIONS = Symbol('SETTLEMENT_OPTIONS');
export const SETTLEMENT_OUTBOX = Symbol('SETTLEMENT_OUTBOX');
