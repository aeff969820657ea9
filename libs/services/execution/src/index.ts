export * from './lib/execution.module';
export * from './lib/execution.datasource-options';
export { EXECUTION } from './lib/execution.constants';
export * from './lib/execution-app.config';
export * from './lib/execution.options';
export { ReconcileCallsUseCase } from './lib/reconcile-calls/reconcile-calls.usecase';
