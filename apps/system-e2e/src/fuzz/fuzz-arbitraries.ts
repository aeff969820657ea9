/**
 * What the fuzz suite sends: fast-check arbitraries for MCP JSON-RPC messages, tool arguments,
 * `_meta` (operation keys, x402 payloads) and admin / finance request bodies. Every one is a complete HTTP request
 * description; the suite sends it and checks the answer.
 */
import fc from 'fast-check';

export interface FuzzRequest {
  /** Which family of input this is, for the counts in the report. */
  family: 'jsonrpc' | 'tool-call' | 'x402' | 'mpp' | 'admin' | 'raw';
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path and query, relative to the system's base URL. */
  path: string;
  /** Which credential goes in `Authorization` (resolved by the suite). */
  auth: 'agent' | 'admin' | 'none' | 'bogus' | 'bare-admin';
  contentType?: string;
  body?: string;
}

/** Strings known to break naive code: NUL, lone surrogates, prototype names, escapes, huge, injection-shaped. */
const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => `x${String.fromCharCode(c)}y`) },
  { weight: 3, arbitrary: fc.constantFrom('\u0000', 'a\u0000b', '__proto__', 'constructor', 'prototype', '%00', '../../../etc/passwd', "'; DROP TABLE x; --", '${7*7}', '\u202e', '\uFEFF', ' ', '') },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 300_000 }).map((n) => 'A'.repeat(n)) },
);

const hex = (minLength: number, maxLength: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength, maxLength }).map((h) => `0x${h}`);

const nastyKey = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'prototype', 'text', 'name', 'arguments', '_meta', ''));

/** Any JSON value, with nasty strings and keys, a few levels deep. */
export const jsonValue: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(nastyKey, tie('v'), { maxKeys: 4 }),
  ),
})).v;

/** JSON text that JSON.stringify cannot make: own `__proto__` keys, nesting past any sane depth. */
const hostileJsonText = fc.oneof(
  fc.integer({ min: 1, max: 6000 }).map((d) => `${'['.repeat(d)}${']'.repeat(d)}`),
  fc.integer({ min: 1, max: 6000 }).map((d) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`),
  fc.constantFrom('{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"x":1}}}', '{"text":"a","__proto__":null}'),
);

/** Mostly arbitrary, often shaped like the text tools' input (so calls get past validation into dispatch and payment). */
const argumentsText = fc.oneof(
  { weight: 3, arbitrary: jsonValue.map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 3, arbitrary: fc.record({ text: nastyString }, { requiredKeys: [] }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: hostileJsonText },
);

const rpcId = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.constant(undefined), fc.constant({ nested: 1 }));

const operationKey = fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 300 }), fc.constantFrom('', ' ', 'k'.repeat(256), 'ok-key-1'));

const x402Payment = fc.oneof(
  jsonValue,
  fc.record({
    x402Version: fc.oneof(fc.constant(1), fc.integer()),
    scheme: fc.constantFrom('exact', 'upto', '', 'EXACT'),
    network: fc.constantFrom('base-sepolia', 'base', 'solana', ''),
    payload: fc.record({
      signature: fc.oneof(hex(0, 132), nastyString),
      authorization: fc.record({
        from: hex(40, 40),
        to: hex(40, 40),
        value: fc.oneof(fc.bigInt({ min: -1n, max: 2n ** 80n }).map(String), nastyString),
        validAfter: fc.oneof(fc.integer().map(String), nastyString),
        validBefore: fc.oneof(fc.integer().map(String), nastyString),
        nonce: hex(0, 64),
      }),
    }),
  }),
);

const meta = fc.option(
  fc.record({ 'assay/idempotencyKey': operationKey, 'x402/payment': x402Payment, progressToken: fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), jsonValue) }, { requiredKeys: [] }),
  { nil: undefined },
);

const toolName = fc.constantFrom('call_tool', 'search_tools', 'get_tool', 'word_count', 'reverse_text', 'no_such_tool', '', '__proto__');
const innerTool = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('word_count', 'reverse_text', 'no_such_tool') }, { weight: 1, arbitrary: nastyString });

/** `tools/call` with hostile arguments and `_meta`, through call_tool, the discovery tools, or a tool by name. */
export const toolCall: fc.Arbitrary<FuzzRequest> = fc
  .record({ id: fc.integer({ min: 1, max: 1e6 }), name: toolName, inner: innerTool, args: argumentsText, meta, wrap: fc.boolean(), auth: fc.constantFrom<FuzzRequest['auth']>('agent', 'agent', 'agent', 'agent', 'agent', 'agent', 'agent', 'bogus', 'none') })
  .map(({ id, name, inner, args, meta: m, wrap, auth }) => {
    const toolArgs = name === 'call_tool' && wrap ? `{"name":${JSON.stringify(inner)},"arguments":${args}}` : args;
    const metaText = m === undefined ? '' : `,"_meta":${JSON.stringify(m)}`;
    return { family: 'tool-call', method: 'POST', path: '/mcp/fuzz', auth, contentType: 'application/json', body: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${toolArgs}${metaText}}}` } as FuzzRequest;
  });

const rpcMethod = fc.constantFrom('initialize', 'tools/list', 'tools/call', 'ping', 'resources/list', 'prompts/get', 'logging/setLevel', 'notifications/initialized', 'completion/complete', 'no/such', '', '__proto__');

/** Any JSON-RPC message shape: odd versions, ids, methods and params. */
export const jsonRpc: fc.Arbitrary<FuzzRequest> = fc
  .record({ jsonrpc: fc.constantFrom('2.0', '1.0', 2, null), id: rpcId, method: fc.oneof(rpcMethod, nastyString), params: fc.option(jsonValue, { nil: undefined }), slug: fc.constantFrom('fuzz', 'fuzz', 'fuzz', 'fuzz', 'fuzz', 'fuzz', 'no-such-url', 'FUZZ', '..%2f') })
  .map(({ jsonrpc, id, method, params, slug }) => ({
    family: 'jsonrpc', method: 'POST', path: `/mcp/${slug}`, auth: 'agent', contentType: 'application/json',
    body: JSON.stringify({ jsonrpc, ...(id === undefined ? {} : { id }), method, ...(params === undefined ? {} : { params }) }),
  }) as FuzzRequest);

/** Percent-encodes like a client would; a lone surrogate (which cannot be encoded) goes as its raw UTF-8 escape. */
const encode = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80';
  }
};

const pathPart = fc.oneof(fc.uuid(), fc.string({ maxLength: 12 }).map(encode), fc.constantFrom('%00', '%ZZ', '..', '%2e%2e', 'demo', 'word_count', '-1'));

/** Admin and finance routes with hostile path parts, queries and bodies, with the admin token or without. */
export const adminRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    route: fc.constantFrom(
      ['POST', '/admin/owners'], ['POST', '/admin/owners/:victim/agents'], ['POST', '/admin/agents/:id/credentials'], ['POST', '/admin/credentials/:id/revoke'],
      ['POST', '/admin/mcp-urls'], ['PATCH', '/admin/mcp-urls/:id'], ['PUT', '/admin/mcp-urls/:id/access-policy'], ['PUT', '/admin/owners/:victim/access-policy'],
      ['POST', '/admin/owners/:victim/deposits'], ['POST', '/admin/deposits/:id/chargeback'], ['GET', '/admin/owners/:victim/wallet'],
      ['PUT', '/admin/owners/:victim/agents/:id/spend-policy'], ['GET', '/admin/approvals'], ['POST', '/admin/approvals/:id/approve'],
      ['POST', '/admin/finance-tokens'], ['DELETE', '/admin/finance-tokens/:id'], ['PATCH', '/admin/tools/:id'], ['POST', '/admin/tools/:id/versions/:id/approve'],
      ['POST', '/admin/providers'], ['POST', '/admin/providers/:id/sync'], ['GET', '/admin/providers/:id/statement'], ['POST', '/admin/providers/:id/payouts'],
      ['GET', '/admin/reconciliations'], ['POST', '/admin/reconciliations/:id/resolve'], ['GET', '/balances'], ['GET', '/balances/owners/:id'],
      ['GET', '/balances/providers/:id'], ['GET', '/calls/:id'], ['POST', '/signin/device'], ['POST', '/signin/device/:id/poll'], ['POST', '/signin/approve/:id'],
    ) as fc.Arbitrary<[FuzzRequest['method'], string]>,
    parts: fc.array(pathPart, { minLength: 3, maxLength: 3 }),
    query: fc.option(fc.dictionary(fc.constantFrom('asOf', 'periodStart', 'periodEnd', 'cursor', 'limit', 'x'), nastyString.map(encode), { maxKeys: 3 }), { nil: undefined }),
    body: fc.oneof(jsonValue.map((v) => JSON.stringify(v) ?? 'null'), hostileJsonText,
      // Bodies a DTO would accept but for one unstorable character (NUL, a lone surrogate) in a field it stores.
      fc.record({ name: fc.constantFrom('a\u0000b', '\ud800'), deviceName: fc.constantFrom('d\u0000'), slug: fc.constant('demo'), label: fc.constantFrom('l\u0000') }, { requiredKeys: ['name'] }).map((v) => JSON.stringify(v)),
      fc.record({ name: nastyString, slug: nastyString, reference: nastyString, amount: jsonValue, priceMinor: jsonValue, asset: nastyString }, { requiredKeys: [] }).map((v) => JSON.stringify(v))),
    auth: fc.constantFrom<FuzzRequest['auth']>('admin', 'admin', 'admin', 'none', 'bogus', 'bare-admin', 'agent'),
  })
  .map(({ route: [method, template], parts, query, body, auth }) => {
    let i = 0;
    const p = template.replace(/:(id|victim)/g, (_, k: string) => (k === 'victim' ? 'VICTIM' : parts[i++ % parts.length]!));
    const q = query && Object.keys(query).length > 0 ? `?${Object.entries(query).map(([k, v]) => `${k}=${v}`).join('&')}` : '';
    return { family: 'admin', method, path: `${p}${q}`, auth, contentType: 'application/json', ...(method === 'GET' || method === 'DELETE' ? {} : { body }) } as FuzzRequest;
  });

/** Bytes that are not JSON, wrong content types, form bodies. */
export const rawRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    path: fc.constantFrom('/mcp/fuzz', '/admin/owners', '/signin/device', '/balances'),
    contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'multipart/form-data; boundary=x', ''),
    body: fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ maxLength: 200 }).map((s) => `{"jsonrpc":"2.0",${s}`), fc.constantFrom('', 'null', '[]', '[{}]', '"x"', '0', '{"a":1}{"b":2}')),
    auth: fc.constantFrom<FuzzRequest['auth']>('agent', 'admin', 'none'),
  })
  .map(({ path, contentType, body, auth }) => ({ family: 'raw', method: 'POST', path, auth, contentType, body }) as FuzzRequest);

/**
 * A paid call with a well-formed x402 payment (`@@X402_<k>@@`: one of the suite's signed payments, most valid, some
 * wrong), through call_tool or by name, under a fresh or a repeated operation key: these reach payment's facilitator.
 */
export const x402Call: fc.Arbitrary<FuzzRequest> = fc
  .record({ id: fc.integer({ min: 1, max: 1e6 }), k: fc.nat(99), key: fc.oneof(fc.uuid(), fc.constantFrom('x402-repeat-1', 'x402-repeat-2')), wrap: fc.boolean(), text: fc.string({ maxLength: 20 }) })
  .map(({ id, k, key, wrap, text }) => {
    const args = JSON.stringify({ text });
    const params = wrap
      ? `{"name":"call_tool","arguments":{"name":"reverse_text","arguments":${args}}`
      : `{"name":"reverse_text","arguments":${args}`;
    return {
      family: 'x402', method: 'POST', path: '/mcp/fuzz', auth: 'agent', contentType: 'application/json',
      body: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params},"_meta":{"assay/idempotencyKey":${JSON.stringify(key)},"x402/payment":"@@X402_${k}@@"}}}`,
    } as FuzzRequest;
  });

/**
 * A paid call with an MPP credential (`@@MPP_<k>@@`: one of the suite's, most for a funded payer, some unknown or
 * forged) in the MCP binding's `_meta`, to the fixed-price or the metered tool, under a fresh or a repeated key.
 */
export const mppCall: fc.Arbitrary<FuzzRequest> = fc
  .record({ id: fc.integer({ min: 1, max: 1e6 }), k: fc.nat(29), key: fc.oneof(fc.uuid(), fc.constantFrom('mpp-repeat-1', 'mpp-repeat-2')), tool: fc.constantFrom('reverse_text', 'word_count'), text: fc.string({ maxLength: 20 }) })
  .map(({ id, k, key, tool, text }) => ({
    family: 'mpp', method: 'POST', path: '/mcp/fuzz', auth: 'agent', contentType: 'application/json',
    body: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"${tool}","arguments":${JSON.stringify({ text })}},"_meta":{"assay/idempotencyKey":${JSON.stringify(key)},"org.paymentauth/credential":"@@MPP_${k}@@"}}}`,
  }) as FuzzRequest);
