export * from './lib/env-var.decorator';
export * from './lib/load-config';
export * from './lib/common.config';
