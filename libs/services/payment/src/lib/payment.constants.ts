export const PAYMENT = 'payment';
export const PAYMENT_OPTIONS = Symbol('PAYMENT_OPTIONS');
export const PAYMENT_OUTBOX = Symbol('PAYMENT_OUTBOX');
export const PAYMENT_ADMIN = Symbol('PAYMENT_ADMIN');
