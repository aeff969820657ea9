/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance
 * 0.1.13, server scenarios) against a gateway URL. The suite sends no
 * credential, so a loopback proxy in the test adds the agent's bearer header
 * — exactly what an agent's MCP client does. Failures must match the
 * committed baseline (apps/system-e2e/conformance-baseline.yml, each entry
 * with its reason): an unexpected failure, or a listed one that now passes,
 * fails the run.
 */
import { readFileSync, chmodSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePort, type RunningProcess, startProcess, startTsProcess, WORKSPACE_ROOT } from '@tollgate/testing';

jest.setTimeout(300_000);

describe('MCP conformance suite against a gateway URL', () => {
  let system: RunningProcess;
  let proxy: http.Server;
  let dataDir: string;
  let proxyPort: number;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-conformance-'));
    chmodSync(dataDir, 0o755);
    const [port, pgPort] = [await freePort(), await freePort()];
    proxyPort = await freePort();
    system = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], { DEMO_MONEY: 'false', PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    await system.waitForOutput(/Tollgate is running/, 120_000);
    const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as { mcpUrl: string; credential: string };
    const target = new URL(demo.mcpUrl);
    proxy = http.createServer((req, res) => {
      const upstream = http.request(
        { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: { ...req.headers, authorization: `Bearer ${demo.credential}` } },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
    await system?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('passes every scenario that applies; the rest are the committed baseline', async () => {
    const cli = path.join(WORKSPACE_ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
    const run = startProcess('conformance', process.execPath, [
      cli, 'server', '--url', `http://127.0.0.1:${proxyPort}/mcp`, '--expected-failures', path.join(WORKSPACE_ROOT, 'apps/system-e2e/conformance-baseline.yml'),
    ]);
    const code = await new Promise<number | null>((resolve) => run.child.once('exit', (c) => resolve(c)));
    const out = run.output();
    expect({ code, tail: code === 0 ? '' : out.slice(-4000) }).toEqual({ code: 0, tail: '' });
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'tools-call-error']) {
      expect(out).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
    }
    expect(out).toMatch(/Baseline check passed/);
  });
});
