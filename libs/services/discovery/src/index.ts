export * from './lib/discovery.module';
export * from './lib/discovery.options';
export * from './lib/discovery.datasource-options';
export { DISCOVERY } from './lib/discovery.constants';
export { RegisterProviderUseCase } from './lib/register-provider/register-provider.usecase';
export * from './lib/discovery-app.config';
