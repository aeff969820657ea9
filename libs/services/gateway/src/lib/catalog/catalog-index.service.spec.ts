import { type GatewayOptions } from '../gateway.options';
import { type CatalogTool } from './catalog-access';
import { CatalogIndex } from './catalog-index.service';

const tool = (name: string, summary: string, t: Partial<CatalogTool> = {}): CatalogTool => ({
  toolId: name, name, status: 'active', category: 'general', tags: [], summary, description: summary,
  bindings: [{ bindingId: 'p:x', providerId: 'p', transport: 'http', endpoint: 'http://x', upstreamToolName: name, contractHash: 'a'.repeat(64), health: 'healthy' }],
  ...t,
}) as CatalogTool;

describe('CatalogIndex ranking (G3.7)', () => {
  const index = new CatalogIndex(undefined as never, {} as GatewayOptions);
  index.replaceAll([
    tool('get_weather', 'Current weather for a city.', { category: 'weather', tags: ['weather'] }),
    tool('weather_forecast', 'Seven-day weather forecast for a city.', { category: 'weather', tags: ['forecast'] }),
    tool('create_support_ticket', 'Creates a support ticket in the help desk.', { category: 'support', tags: ['ticket'] }),
    tool('old_tool', 'A removed weather tool.', { status: 'removed' }),
  ]);
  const names = async (q: string) => (await index.rank(q, () => true)).map((r) => r.tool.name);

  it('ranks by relevance, ignores stop words, and never returns removed tools', async () => {
    expect((await names('weather forecast for a city'))[0]).toBe('weather_forecast');
    expect(await names('create a support ticket')).toEqual(['create_support_ticket']);
    expect(await names('weather')).not.toContain('old_tool');
  });

  it('matches the word being typed by prefix, and typos only as a fallback', async () => {
    expect(await names('support tick')).toEqual(['create_support_ticket']);
    expect(await names('weathr')).toEqual(expect.arrayContaining(['get_weather', 'weather_forecast']));
  });

  it('lists every active tool by name for an empty query, with score 0', async () => {
    expect((await index.rank('', () => true)).map((r) => [r.tool.name, r.score])).toEqual([['create_support_ticket', 0], ['get_weather', 0], ['weather_forecast', 0]]);
  });

  it('applies the caller\'s filter after ranking, and forgets cached rankings when the catalog changes', async () => {
    expect((await index.rank('weather', (t) => t.name === 'get_weather')).map((r) => r.tool.name)).toEqual(['get_weather']);
    const other = new CatalogIndex(undefined as never, {} as GatewayOptions);
    other.replaceAll([tool('a_weather_tool', 'Weather.')]);
    expect((await other.rank('weather', () => true)).map((r) => r.tool.name)).toEqual(['a_weather_tool']);
    other.replaceAll([tool('b_weather_tool', 'Weather.')]);
    expect((await other.rank('weather', () => true)).map((r) => r.tool.name)).toEqual(['b_weather_tool']);
  });
});
