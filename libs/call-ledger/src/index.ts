export * from './lib/call-life';
