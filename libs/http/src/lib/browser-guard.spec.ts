import { browserGuard } from './browser-guard';

/** The guard's decision per setting (the e2e drives it through npm start). */
describe('browserGuard', () => {
  const logger = { info: jest.fn() } as unknown as Parameters<typeof browserGuard>[1];
  const run = (options: Parameters<typeof browserGuard>[0], headers: Record<string, string>, path = '/mcp/demo') => {
    let status = 0;
    let passed = false;
    const res = { status: (s: number) => ((status = s), res), json: () => res };
    browserGuard(options, logger)({ path, headers } as never, res as never, () => (passed = true));
    return passed ? 'served' : status;
  };
  const loopback = { paths: ['/mcp', '/signin'], allowedHosts: [], bindHost: '127.0.0.1' };
  const deployed = { paths: ['/mcp', '/signin'], allowedHosts: [], bindHost: '0.0.0.0' };
  const named = { paths: ['/mcp', '/signin'], allowedHosts: ['gateway.example.com'], bindHost: '0.0.0.0' };

  it('on loopback by default: localhost-class Host and Origin only', () => {
    expect(run(loopback, { host: '127.0.0.1:3000' })).toBe('served');
    expect(run(loopback, { host: 'localhost:3000', origin: 'http://localhost:5173' })).toBe('served');
    expect(run(loopback, { host: 'evil.example' })).toBe(403);
    expect(run(loopback, { host: 'localhost:3000', origin: 'http://evil.example' })).toBe(403);
  });

  it('deployed without a list: any Host; a browser Origin only when it is the site the request was sent to', () => {
    expect(run(deployed, { host: 'gateway.example.com' })).toBe('served');
    expect(run(deployed, { host: 'gateway.example.com:443', origin: 'https://gateway.example.com' })).toBe('served');
    expect(run(deployed, { host: 'gateway.example.com', origin: 'https://evil.example' })).toBe(403);
    expect(run(deployed, { origin: 'https://evil.example' })).toBe(403);
  });

  it('with GATEWAY_ALLOWED_HOSTS: exactly those names', () => {
    expect(run(named, { host: 'gateway.example.com', origin: 'https://gateway.example.com' })).toBe('served');
    expect(run(named, { host: 'other.example.com' })).toBe(403);
    expect(run(named, { host: 'localhost:3000' })).toBe(403);
  });

  it('leaves other routes alone (admin API, health)', () => {
    expect(run(loopback, { host: 'evil.example' }, '/admin/owners')).toBe('served');
    expect(run(loopback, { host: 'evil.example' }, '/mcpx')).toBe('served');
  });
});
