/**
 * The production bundle run exactly as the image runs it, with no container engine (none is reachable here): `npm run
 * build`, then `npm ci --omit=dev --ignore-scripts` inside `dist/` (the image's install), then each service as
 * `node dist/apps/<service>/main.js` — as PID 1 of its own PID namespace, as a non-root user, on a read-only root with
 * a writable /tmp only — against the local PostgreSQL and Kafka, with two gateway replicas. The migrate Job's command
 * runs from the bundle too. Then: every service ready, one paid call through either replica, and a clean exit (code 0)
 * when SIGTERM reaches each PID 1. The embedded host runs from the same bundle under the same conditions.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as PgClient } from 'pg';
import {
  type AppName, canSandbox, createTestDatabase, type DistributedSystem, freePort, SANDBOX_UID, sandboxFacts, type SandboxedProcess, startDistributedSystem,
  startSandboxed, waitFor, WORKSPACE_ROOT,
} from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, postJson, receiptOf } from './agent-client';

jest.setTimeout(400_000);

const SERVICES: AppName[] = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'];
const NAMES = [...SERVICES, 'gateway-b'];
const dist = path.join(WORKSPACE_ROOT, 'dist');

function buildBundle(): void {
  execFileSync(process.execPath, ['-r', '@swc-node/register', 'tools/scripts/build-dist.ts'], { cwd: WORKSPACE_ROOT, stdio: 'pipe' });
  execFileSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dist, stdio: 'pipe', env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' } });
}

describe('the production bundle, run as its image runs it', () => {
  let system: DistributedSystem;
  const sandboxed = new Map<string, SandboxedProcess>();
  const clients: Client[] = [];

  beforeAll(async () => {
    // Never skipped: without these the bundle would go untested, and CI runs as root on Linux.
    if (!canSandbox()) throw new Error('this test needs root and util-linux (unshare, setpriv) to run services as a container runtime would');
    buildBundle();
    system = await startDistributedSystem(NAMES, { SETTLEMENT_VERIFICATION_WINDOW_MS: '200' }, (n) => n.replace(/-b$/, '') as AppName, {
      launch: (name, app, env) => {
        const p = startSandboxed(name, process.execPath, [`dist/apps/${app}/main.js`], env);
        sandboxed.set(name, p);
        return p;
      },
    });
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await system?.stop();
  });

  it('the one-shots of the bundle: topics created, then migrate (its URL from a mounted secret file) applies once', async () => {
    const secrets = mkdtempSync(path.join(dist, '.secrets-'));
    chmodSync(secrets, 0o755);
    const db = await createTestDatabase('tollgate_bundle');
    writeFileSync(path.join(secrets, 'database_url'), `${db.url}\n`, { mode: 0o644 });
    const run = async (args: string[], env: NodeJS.ProcessEnv) => {
      const p = startSandboxed(args.join(' '), process.execPath, args, env);
      const code = await new Promise<number | null>((resolve) => p.child.once('exit', resolve));
      return { code, out: p.output() };
    };
    try {
      const topics = await run(['dist/tools/ops/src/create-topics.js'], { KAFKA_TOPIC_PREFIX: `bundle-${Date.now().toString(36)}.` });
      expect(topics).toEqual({ code: 0, out: expect.stringMatching(/topics: (\d+) listed, \1 created/) });
      const migrate = () => run(['dist/tools/ops/main.js', 'migrate', 'all'], { DATABASE_URL: '', DATABASE_URL_FILE: path.join(secrets, 'database_url') });
      const first = await migrate();
      expect(first.code).toBe(0);
      // A line per migrating service naming what it applied.
      expect(first.out.split('\n').filter((l) => /^[a-z]+: \S/.test(l) && !l.includes('up to date'))).toHaveLength(6);
      const second = await migrate();
      expect(second.code).toBe(0);
      expect(second.out.match(/up to date/g)).toHaveLength(6);
    } finally {
      await db.drop();
      rmSync(secrets, { recursive: true, force: true });
    }
  });

  it('runs every service as PID 1, non-root, on a read-only root, and each is ready', async () => {
    for (const name of NAMES) {
      const facts = sandboxFacts(await sandboxed.get(name)!.innerPid());
      expect({ name, ...facts }).toEqual({ name, pidInside: 1, uid: SANDBOX_UID, rootReadOnly: true });
      const probe = name === 'sample-providers' ? 'live' : 'ready';
      expect({ name, status: (await fetch(`${system.url(name)}/health/${probe}`)).status }).toEqual({ name, status: 200 });
    }
  });

  it('started together on an empty database (two gateways among them), every service applied each migration once', async () => {
    const pg = new PgClient({ connectionString: system.db.url });
    await pg.connect();
    try {
      for (const schema of ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger']) {
        const { rows } = await pg.query<{ applied: number; names: number }>(`SELECT count(*)::int AS applied, count(DISTINCT name)::int AS names FROM "${schema}".migrations`);
        expect({ schema, ...rows[0] }).toEqual({ schema, applied: expect.any(Number), names: rows[0]!.applied });
        expect(rows[0]!.applied).toBeGreaterThan(0);
      }
    } finally {
      await pg.end();
    }
  });

  it('answers a paid call through either gateway replica', async () => {
    const token = system.adminToken;
    const gw = system.url('gateway');
    const ownerId = (await postJson(`${gw}/admin/owners`, { name: 'Bundle owner' }, token)).json['ownerId'] as string;
    expect((await postJson(`${gw}/admin/mcp-urls`, { slug: 'bundle', discoveryMode: 'search' }, token)).status).toBe(201);
    const registered = await postJson(`${system.url('discovery')}/admin/providers`, { providerId: 'text-tools', endpoint: `${system.url('sample-providers')}/providers/text-tools/mcp` }, token);
    expect(registered.json['ok']).toBe(true);
    const priced = await fetch(`${system.url('discovery')}/admin/tools/word_count`, {
      method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ priceMinor: '100', asset: 'USDC', freeCallsPerDay: 0 }),
    });
    expect(priced.status).toBe(200);
    expect((await postJson(`${system.url('payment')}/admin/owners/${ownerId}/deposits`, { reference: 'bundle', amount: { amountMinor: '1000', asset: 'USDC' } }, token)).status).toBe(201);
    for (const g of ['gateway', 'gateway-b']) {
      const agent = await postJson(`${gw}/admin/owners/${ownerId}/agents`, { name: `agent via ${g}` }, token);
      const credential = (await postJson(`${gw}/admin/agents/${agent.json['agentId']}/credentials`, {}, token)).json['credential'] as string;
      const client = await connectAgent(`${system.url(g)}/mcp/bundle`, credential);
      clients.push(client);
      await waitFor(`word_count priced in ${g}`, async () => {
        const r = (await client.callTool({ name: 'get_tool', arguments: { name: 'word_count' } })) as CallToolResult;
        return (r.structuredContent as { price?: { amountMinor?: string } | null } | undefined)?.price?.amountMinor === '100';
      }, 60_000, 250);
      const answer = await callThrough(client, 'word_count', { text: `through ${g}` }, `bundle-${g}`);
      expect(errorOf(answer)).toBeUndefined();
      expect(answer.structuredContent).toEqual(expect.objectContaining({ words: 2 }));
      const receipt = receiptOf(answer)!;
      expect(receipt.status === 'SETTLED' ? receipt.charged.amountMinor : receipt.held.amountMinor).toBe('100');
    }
  });

  it('runs the embedded host from the same bundle (its data folder on the writable /tmp): ready, then exit 0 on SIGTERM', async () => {
    const db = await createTestDatabase('tollgate_bundle_embedded');
    const port = await freePort();
    const host = startSandboxed('embedded', process.execPath, ['dist/apps/embedded/main.js'], { DATABASE_URL: db.url, DATA_DIR: '/tmp/data', PORT: String(port) });
    try {
      await waitFor('the embedded host ready', async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200, 120_000, 500);
      expect(sandboxFacts(await host.innerPid())).toEqual({ pidInside: 1, uid: SANDBOX_UID, rootReadOnly: true });
      await host.waitForOutput(/Tollgate is running \(embedded mode\)/, 60_000);
      expect(await host.stop('SIGTERM')).toBe(0);
    } finally {
      await host.stop('SIGKILL');
      await db.drop();
    }
  });

  it('stops every service cleanly (exit code 0) when SIGTERM reaches its PID 1', async () => {
    const codes = await Promise.all(NAMES.map(async (name) => ({ name, code: await sandboxed.get(name)!.stop('SIGTERM') })));
    expect(codes).toEqual(NAMES.map((name) => ({ name, code: 0 })));
  });
});
