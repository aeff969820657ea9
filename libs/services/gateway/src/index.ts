export * from './lib/gateway.module';
export * from './lib/gateway.options';
export * from './lib/gateway.datasource-options';
export { GATEWAY } from './lib/gateway.constants';
export { ManageIdentitiesUseCase } from './lib/admin/manage-identities.usecase';
export * from './lib/gateway-app.config';
