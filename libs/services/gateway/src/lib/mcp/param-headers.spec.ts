import { decodeParamHeader, paramHeaderMismatch, paramHeadersOf } from './param-headers';

// Mcp-Param headers (2026-07-28, SEP-2243): a tools/call whose arguments and headers disagree is refused (400, -32020).

const SCHEMA = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    limit: { type: 'integer', 'x-mcp-header': 'Limit' },
    nested: { type: 'object', properties: { tenant: { type: 'string', 'x-mcp-header': 'Tenant' } } },
    list: { type: 'array', items: { type: 'object', properties: { ignored: { type: 'string', 'x-mcp-header': 'Ignored' } } } },
    plain: { type: 'string' },
  },
};
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
const call = (args: Record<string, unknown>, meta: Record<string, unknown> = META) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'regional', arguments: args, _meta: meta } });
const check = (args: Record<string, unknown>, headers: Record<string, string>, meta?: Record<string, unknown>) =>
  paramHeaderMismatch(call(args, meta), headers, (name) => (name === 'regional' ? SCHEMA : undefined));

describe('Mcp-Param headers', () => {
  it('finds declarations on properties chains only, never under items', () => {
    expect(paramHeadersOf(SCHEMA).map((d) => [d.path.join('.'), d.header, d.numeric])).toEqual([
      ['region', 'Region', false], ['limit', 'Limit', true], ['nested.tenant', 'Tenant', false],
    ]);
  });

  it('decodes the Base64 sentinel strictly and takes anything else literally', () => {
    expect(decodeParamHeader('=?base64?SGVsbG8=?=')).toBe('Hello');
    expect(decodeParamHeader('=?base64?SGVsbG8?=')).toBeUndefined(); // missing padding
    expect(decodeParamHeader('=?base64?SGVs!!!bG8=?=')).toBeUndefined(); // outside the alphabet
    expect(decodeParamHeader('=?base64?//79?=')).toBeUndefined(); // not UTF-8
    expect(decodeParamHeader('SGVsbG8=')).toBe('SGVsbG8=');
    expect(decodeParamHeader('=?base64?SGVsbG8=')).toBe('=?base64?SGVsbG8=');
  });

  it('accepts headers that carry what the body carries, literal, encoded or numeric', () => {
    expect(check({ region: 'eu', limit: 5, nested: { tenant: 't1' } }, { 'mcp-param-region': 'eu', 'mcp-param-limit': '5.0', 'mcp-param-tenant': '=?base64?dDE=?=' })).toBeUndefined();
    expect(check({ plain: 'x' }, {})).toBeUndefined(); // no declared value in the body, no header expected
    expect(check({ region: null }, {})).toBeUndefined();
  });

  it('refuses a body value without its header, a header that disagrees, and an undecodable one', () => {
    expect(check({ region: 'eu' }, {})).toMatchObject({ id: 7, data: { mismatch: { header: 'Mcp-Param-Region' } } });
    expect(check({ region: 'eu' }, { 'mcp-param-region': 'us' })?.message).toMatch(/says "us" but the body carries region="eu"/);
    expect(check({ limit: 5 }, { 'mcp-param-limit': '6' })?.data.mismatch.header).toBe('Mcp-Param-Limit');
    expect(check({ nested: { tenant: 't1' } }, { 'mcp-param-tenant': '=?base64?dDE?=' })?.message).toMatch(/not valid Base64/);
  });

  it('leaves 2025-era requests, other methods and tools the caller cannot reach alone', () => {
    expect(check({ region: 'eu' }, {}, {})).toBeUndefined();
    expect(paramHeaderMismatch({ ...call({ region: 'eu' }), method: 'tools/list' }, {}, () => SCHEMA)).toBeUndefined();
    expect(paramHeaderMismatch(call({ region: 'eu' }), {}, () => undefined)).toBeUndefined();
  });
});
