import { Injectable } from '@nestjs/common';
import { type Tool } from '@modelcontextprotocol/server';
import { type CatalogTool, effectiveMode, isAccessible, pinnedTools, structuredPrice, type UrlProfile } from '../catalog/catalog-access';
import { CatalogIndex } from '../catalog/catalog-index.service';
import { HOSTED_TOOLS } from '../hosted-tools/hosted-tools';

/**
 * A catalog tool as a direct MCP tool: its own name, description, input and (where declared) output schema (G6); a
 * priced tool says its price in `_meta["assay/price"]` (display text and structure; metered: the most a call costs).
 */
export function directTool(t: CatalogTool): Tool {
  const price = structuredPrice(t);
  return {
    name: t.name,
    ...(t.title ? { title: t.title } : {}),
    description: t.description || t.summary,
    inputSchema: t.inputSchema as Tool['inputSchema'],
    ...(t.outputSchema ? { outputSchema: t.outputSchema as Tool['outputSchema'] } : {}),
    ...(t.annotations ? { annotations: t.annotations as Tool['annotations'] } : {}),
    ...(price ? { _meta: { 'assay/price': price } } : {}),
  };
}

/**
 * tools/list per the URL's discovery mode (G1): `full` lists every accessible
 * catalog tool; `search` lists at most five pinned tools plus search_tools,
 * get_tool and call_tool; `auto` picks by the URL's threshold. The hosted
 * tools stay callable under `full` even though it does not list them.
 */
@Injectable()
export class ListToolsUseCase {
  constructor(private readonly catalog: CatalogIndex) {}

  execute(profile: UrlProfile): { mode: 'full' | 'search'; tools: Tool[] } {
    const accessible = [...this.catalog.all()].filter((t) => isAccessible(t, profile)).sort((a, b) => (a.name < b.name ? -1 : 1));
    const mode = effectiveMode(profile, accessible.length);
    if (mode === 'full') return { mode, tools: accessible.map(directTool) };
    const pinned = pinnedTools(profile, (n) => this.catalog.get(n)).map(directTool);
    return { mode, tools: [...pinned, ...HOSTED_TOOLS.map((h) => ({ ...h, inputSchema: h.inputSchema as unknown as Tool['inputSchema'] }))] };
  }
}
