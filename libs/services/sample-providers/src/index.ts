export * from './lib/sample-providers.module';
export * from './lib/text-tools.server';
export * from './lib/sample-providers.options';
export * from './lib/sample-providers-app.config';
