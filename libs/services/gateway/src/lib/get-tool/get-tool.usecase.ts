import { Injectable } from '@nestjs/common';
import { type CallerIdentity } from '../authenticate/authenticate.usecase';
import { type CatalogTool, isAccessible, noProviderFits, structuredPrice, type UrlProfile } from '../catalog/catalog-access';
import { CatalogIndex } from '../catalog/catalog-index.service';
import { FreeCallsService } from '../catalog/free-calls.service';
import { checkArguments, GET_TOOL_INPUT, refusal, structuredResult } from '../hosted-tools/hosted-tools';
import { RateLimits } from '../rate-limit/rate-limits.service';

/** get_tool (G4): a tool's full contract as a call through this URL would use it. Free. */
@Injectable()
export class GetToolUseCase {
  constructor(
    private readonly catalog: CatalogIndex,
    private readonly freeCalls: FreeCallsService,
    private readonly limits: RateLimits,
  ) {}

  async execute(caller: CallerIdentity, profile: UrlProfile, raw: unknown, now = Date.now()) {
    const bad = checkArguments(GET_TOOL_INPUT, raw);
    if (bad) return bad;
    const { name } = raw as { name: string };
    const limited = await this.limits.consume('read', caller.agentId, now);
    if (!limited.ok) {
      return refusal({ code: 'RATE_LIMITED', retryable: true, retryAfterMs: limited.retryAfterMs, message: `At most 120 tool reads per agent per minute. Retry in ${Math.ceil(limited.retryAfterMs / 1000)} s.` });
    }
    const tool = this.catalog.get(name);
    if (!tool || !isAccessible(tool, profile)) {
      return refusal({ code: 'TOOL_NOT_IN_TOOLSET', retryable: false, message: `No tool named "${name}" is available through this URL. Search again on the connection you mean to use.` });
    }
    const free = await this.freeCalls.leftToday(caller.agentId, [tool]);
    return structuredResult(toolCard(tool, profile, free.get(tool.name) ?? null));
  }
}

/** Everything get_tool tells an agent about one tool it may use. */
function toolCard(tool: CatalogTool, profile: UrlProfile, freeCallsLeftToday: number | null) {
  return {
    name: tool.name,
    kind: tool.kind,
    category: tool.category,
    tags: tool.tags,
    summary: tool.summary,
    description: tool.description,
    ...(tool.notReviewed ? { notReviewed: true } : {}),
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema ?? null,
    optionalInputFields: tool.optionalInputFields,
    optionalOutputFields: tool.optionalOutputFields,
    examples: tool.examples,
    version: tool.version,
    ...(tool.changelog.length > 1 ? { changelog: tool.changelog.map(({ version, state, at, note }) => ({ version, state, at, note })) } : {}),
    ...(tool.deprecation ? { 'assay/deprecated': { sunsetAt: tool.deprecation.sunsetAt, ...(tool.deprecation.replacement ? { replacement: tool.deprecation.replacement } : {}) } } : {}),
    providerTool: {
      ...(tool.title ? { title: tool.title } : {}),
      ...(tool.providerMeta ? { meta: tool.providerMeta } : {}),
      providers: tool.bindings.map((b) => ({ providerId: b.providerId, upstreamToolName: b.upstreamToolName, health: b.health })),
    },
    tier: tool.tier,
    price: structuredPrice(tool),
    noProviderFits: noProviderFits(tool, profile),
    freeCallsLeftToday,
    annotations: tool.annotations ?? {},
  };
}
