import dns, { type LookupAddress } from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { type OutboundPolicy, portAllowed, refusedAddress } from './outbound-policy';

/** A fetch the policy refused, or a response refused on its shape; `reason` is safe to log, never shown to a caller as is. */
export class OutboundRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

export interface LimitedFetchOptions {
  /** The most body bytes read; a longer body is cut off and refused. */
  maxBytes: number;
  timeoutMs: number;
  accept?: string;
  /** Plain http too (only a developer's loopback); https otherwise. */
  allowHttp?: boolean;
}

export interface LimitedResponse {
  status: number;
  body: Buffer;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The DNS step of the connection itself: every answer is checked, and the socket connects to the first allowed one —
 * the very address that was checked, so a second DNS answer between the check and the connect cannot exist.
 */
function checkedLookup(policy: OutboundPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { family: options.family ?? 0, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const allowed = addresses.find((a) => refusedAddress(policy, a.address) === undefined);
      if (!allowed) return callback(new OutboundRefused(`${hostname} resolves to no allowed address (${addresses.map((a) => `${a.address}: ${refusedAddress(policy, a.address)}`).join(', ')})`), []);
      if (options.all) callback(null, [allowed]);
      else callback(null, allowed.address, allowed.family);
    });
  };
}

/** Checks what can be checked before connecting: the scheme, the port, and an address written in the URL. */
function checkUrl(url: URL, policy: OutboundPolicy, allowHttp: boolean): void {
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) throw new OutboundRefused(`scheme ${url.protocol} is not allowed`);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (!portAllowed(policy, port)) throw new OutboundRefused(`port ${port} is not allowed`);
  // The URL parser has already normalised every numeric spelling (2130706433, 0x7f.1, 017700000001) to dotted form.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const why = net.isIP(host) ? refusedAddress(policy, host) : undefined;
  if (why) throw new OutboundRefused(`address ${host} is ${why}`);
}

/** Reads at most `maxBytes` of an uncompressed body; more, or a compressed one, is refused before it is held. */
function readBody(res: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const encoding = String(res.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity') return Promise.reject(new OutboundRefused(`content-encoding ${encoding} is refused`));
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.reject(new OutboundRefused(`content-length ${declared} is over ${maxBytes} bytes`));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    res.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) {
        res.destroy();
        reject(new OutboundRefused(`body over ${maxBytes} bytes`));
      } else chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
  });
}

/**
 * A GET of a URL that a caller the platform does not trust named (SSRF-safe): destination checked by the policy
 * (every address, however spelled, before the connection and at the connection), no redirects, no compression,
 * the body streamed and cut at `maxBytes`, the whole exchange bounded by `timeoutMs`.
 */
export function fetchLimited(url: URL, policy: OutboundPolicy, o: LimitedFetchOptions): Promise<LimitedResponse> {
  try {
    checkUrl(url, policy, o.allowHttp ?? false);
  } catch (e) {
    return Promise.reject(e);
  }
  return new Promise((resolve, reject) => {
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.request(url, {
      method: 'GET', agent: false, lookup: checkedLookup(policy) as never,
      headers: { accept: o.accept ?? '*/*', 'accept-encoding': 'identity', 'user-agent': 'tollgate' },
    }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        res.destroy();
        return reject(new OutboundRefused(`redirect (HTTP ${status}) not followed`));
      }
      readBody(res, o.maxBytes).then((body) => resolve({ status, body }), reject).finally(() => clearTimeout(timer));
    });
    const timer = setTimeout(() => req.destroy(new OutboundRefused(`no answer within ${o.timeoutMs} ms`)), o.timeoutMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end();
  });
}
