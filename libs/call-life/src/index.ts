export * from './lib/call-event';
export * from './lib/call-state';
export * from './lib/decisions';
export * from './lib/call-route';
export * from './lib/attempts';
export * from './lib/metering';
