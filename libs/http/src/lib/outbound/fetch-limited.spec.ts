/**
 * Outbound fetches a caller can steer (G2 sign-in; the security review of the sign-in): the destination policy and the
 * streamed, bounded read, against real listeners on loopback. The default policy must never connect to them.
 */
import http from 'node:http';
import { type AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { fetchLimited, OutboundRefused } from './fetch-limited';
import { DEFAULT_OUTBOUND_POLICY, parseOutboundPolicy, refusedAddress } from './outbound-policy';

describe('the outbound destination policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'], ['::1', 'loopback'], ['::ffff:127.0.0.1', 'loopback'], ['[::ffff:7f00:1]', 'loopback'], ['10.0.0.7', 'private'],
    ['192.168.1.1', 'private'], ['172.16.0.1', 'private'], ['169.254.169.254', 'linkLocal'], ['fe80::1', 'linkLocal'], ['fd00::1', 'uniqueLocal'],
    ['100.64.0.1', 'carrierGradeNat'], ['0.0.0.0', 'unspecified'], ['224.0.0.1', 'multicast'], ['2002:7f00:1::', '6to4'], ['64:ff9b::7f00:1', 'rfc6052'],
  ])('refuses %s (%s) by default', (address, range) => {
    expect(refusedAddress(DEFAULT_OUTBOUND_POLICY, address)).toBe(range);
  });

  it('allows public unicast addresses, and what the operator adds', () => {
    expect(refusedAddress(DEFAULT_OUTBOUND_POLICY, '93.184.215.14')).toBeUndefined();
    expect(refusedAddress(DEFAULT_OUTBOUND_POLICY, '2606:4700::1')).toBeUndefined();
    const policy = parseOutboundPolicy('127.0.0.1/32, 10.1.0.0/16', '443, 8443');
    expect(refusedAddress(policy, '127.0.0.1')).toBeUndefined();
    expect(refusedAddress(policy, '10.1.2.3')).toBeUndefined();
    expect(refusedAddress(policy, '10.2.0.1')).toBe('private');
    expect(refusedAddress(policy, '127.0.0.2')).toBe('loopback');
    expect(() => parseOutboundPolicy('localhost', '')).toThrow(/not an address/);
    expect(() => parseOutboundPolicy('', '70000')).toThrow(/not a port/);
  });
});

describe('fetchLimited', () => {
  let server: http.Server;
  let port: number;
  let connections = 0;
  const routes: Record<string, (res: http.ServerResponse) => void> = {
    '/ok': (res) => res.end('{"a":1}'),
    '/gzip': (res) => {
      res.setHeader('content-encoding', 'gzip');
      res.end(gzipSync(Buffer.alloc(10 * 1024 * 1024, 'a')));
    },
    '/long': (res) => {
      res.setHeader('content-length', String(1_000_000));
      res.end(Buffer.alloc(1_000_000));
    },
    '/chunked': (res) => {
      for (let i = 0; i < 64; i++) res.write(Buffer.alloc(1024, 'x'));
      res.end();
    },
    '/redirect': (res) => {
      res.statusCode = 302;
      res.setHeader('location', '/ok');
      res.end();
    },
    '/hang': () => undefined,
  };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const route = routes[req.url ?? ''];
      if (route) route(res);
      else res.writeHead(404).end();
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });

  const allowed = () => parseOutboundPolicy('127.0.0.1/32', '*');
  const get = (path: string, policy = allowed(), host = '127.0.0.1') =>
    fetchLimited(new URL(`http://${host}:${port}${path}`), policy, { maxBytes: 5 * 1024, timeoutMs: 1000, allowHttp: true });

  it('reads a small body from an allowed destination', async () => {
    const res = await get('/ok');
    expect({ status: res.status, body: res.body.toString() }).toEqual({ status: 200, body: '{"a":1}' });
  });

  it('refuses a compressed body, a long declared body, a long streamed body and a redirect', async () => {
    await expect(get('/gzip')).rejects.toThrow(/content-encoding gzip/);
    await expect(get('/long')).rejects.toThrow(/content-length 1000000/);
    await expect(get('/chunked')).rejects.toThrow(/body over 5120 bytes/);
    await expect(get('/redirect')).rejects.toThrow(/redirect \(HTTP 302\)/);
    await expect(get('/hang')).rejects.toThrow(/no answer within 1000 ms/);
  });

  it('never connects to loopback under the default policy, however the address is spelled', async () => {
    const before = connections;
    const policy = parseOutboundPolicy('', '*');
    for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '017700000001', '[::ffff:127.0.0.1]', 'localhost']) {
      await expect(get('/ok', policy, host)).rejects.toBeInstanceOf(OutboundRefused);
    }
    expect(connections).toBe(before);
  });

  it('refuses a port the policy does not allow and a scheme other than https unless asked', async () => {
    await expect(get('/ok', parseOutboundPolicy('127.0.0.1/32', '443'))).rejects.toThrow(`port ${port} is not allowed`);
    await expect(fetchLimited(new URL(`http://127.0.0.1:${port}/ok`), allowed(), { maxBytes: 10, timeoutMs: 100 })).rejects.toThrow(/scheme http: is not allowed/);
  });
});
