export * from './lib/service-data-source';
export * from './lib/nest/service-database';
