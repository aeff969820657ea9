import { type DynamicModule, Module } from '@nestjs/common';
import { MutableToolsController, SampleProvidersController } from './sample-providers.controller';
import { SAMPLE_PROVIDERS_OPTIONS, type SampleProvidersOptions } from './sample-providers.options';

/**
 * Real upstream MCP servers for the demo and the tests; owns nothing, emits and consumes no events. They are served on
 * their own loopback port behind a token (never on the gateway's port): the platform presents the token as an upstream
 * credential (`UPSTREAM_CREDENTIALS`), agents never see it.
 */
@Module({})
export class SampleProvidersModule {
  static register(options: SampleProvidersOptions): DynamicModule {
    return {
      module: SampleProvidersModule,
      controllers: [MutableToolsController, SampleProvidersController],
      providers: [{ provide: SAMPLE_PROVIDERS_OPTIONS, useValue: options }],
    };
  }
}

export const TEXT_TOOLS_PATH = '/providers/text-tools/mcp';
export const CATALOG_DEMO_PATH = '/providers/catalog-demo/mcp';
