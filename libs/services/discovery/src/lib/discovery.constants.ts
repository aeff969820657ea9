export const DISCOVERY = 'discovery';
export const DISCOVERY_OPTIONS = Symbol('DISCOVERY_OPTIONS');
export const DISCOVERY_OUTBOX = Symbol('DISCOVERY_OUTBOX');
