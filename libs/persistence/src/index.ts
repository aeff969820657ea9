export * from './lib/service-data-source';
