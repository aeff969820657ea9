export * from './lib/sample-providers.module';
export * from './lib/text-tools.server';
