import { Module } from '@nestjs/common';
import { MutableToolsController, SampleProvidersController } from './sample-providers.controller';

/** Real upstream MCP servers for the demo and the tests; owns nothing, emits and consumes no events. */
@Module({ controllers: [MutableToolsController, SampleProvidersController] })
export class SampleProvidersModule {}

export const TEXT_TOOLS_PATH = '/providers/text-tools/mcp';
export const CATALOG_DEMO_PATH = '/providers/catalog-demo/mcp';
