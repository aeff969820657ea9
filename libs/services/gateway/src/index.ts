export * from './lib/gateway.module';
export * from './lib/gateway.options';
export * from './lib/gateway.datasource-options';
export { GATEWAY } from './lib/gateway.constants';
export { ManageIdentitiesUseCase } from './lib/admin/manage-identities.usecase';
export * from './lib/gateway-app.config';
export { CatalogIndex } from './lib/catalog/catalog-index.service';
export { FreeCallsService } from './lib/catalog/free-calls.service';
export { SearchToolsUseCase } from './lib/search-tools/search-tools.usecase';
