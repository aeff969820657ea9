/**
 * A stock MCP client from the outside: the MCP Inspector's CLI (2.12), in both protocol eras, with a pasted bearer
 * credential and with OAuth — the Inspector registers itself, prints the authorization URL, the owner consents in
 * headless Chromium, the Inspector's loopback callback gets the code and the command runs; a second run uses the
 * stored tokens without a browser (G2, C2).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { freePort, type RunningProcess, startTsProcess, waitFor, WORKSPACE_ROOT } from '@tollgate/testing';

jest.setTimeout(240_000);

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const INSPECTOR = path.join(WORKSPACE_ROOT, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

interface Run { code: number | null; stdout: string; stderr: string }

describe('MCP Inspector CLI against the gateway (both eras, bearer and OAuth)', () => {
  let system: RunningProcess;
  let dir: string;
  let demo: { mcpUrl: string; credential: string; ownerKey: string };
  let browser: Browser;

  /** One Inspector CLI run; `onStderr` sees its error stream as it comes (the OAuth prompt is there). */
  function inspector(args: string[], env: NodeJS.ProcessEnv = {}, onStderr?: (all: string) => void): Promise<Run> {
    const child = spawn(process.execPath, [INSPECTOR, '--cli', ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => void (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      onStderr?.(stderr);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    return new Promise((resolve) => child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }));
  }

  /** The owner's consent, in the browser, on the URL the Inspector printed; it ends at the Inspector's callback. */
  async function consent(url: string): Promise<void> {
    const page = await browser.newPage();
    try {
      await page.goto(url);
      await page.waitForURL(/\/oauth\/consent\//);
      await page.fill('#ownerKey', demo.ownerKey);
      await page.click('button[value="approve"]');
      await page.waitForURL(/\/oauth\/callback/);
    } finally {
      await page.close();
    }
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-inspector-'));
    chmodSync(dir, 0o755);
    const [port, pgPort] = [await freePort(), await freePort()];
    system = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], { PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
    await system.waitForOutput(/Tollgate is running/, 150_000);
    demo = JSON.parse(readFileSync(path.join(dir, 'data', 'demo.json'), 'utf8'));
  });

  afterAll(async () => {
    await browser?.close();
    await system?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const era of ['legacy', 'modern'] as const) {
    it(`${era} era, pasted credential: lists the tools and makes a paid call`, async () => {
      const base = ['--server-url', demo.mcpUrl, '--transport', 'http', '--protocol-era', era, '--header', `Authorization: Bearer ${demo.credential}`];
      const list = await inspector([...base, '--method', 'tools/list']);
      expect({ code: list.code, err: list.code === 0 ? '' : list.stderr.slice(-2000) }).toEqual({ code: 0, err: '' });
      expect(list.stdout).toContain('reverse_text');
      const call = await inspector([...base, '--method', 'tools/call', '--tool-name', 'reverse_text', '--tool-arg', 'text=inspector']);
      expect({ code: call.code, err: call.code === 0 ? '' : call.stderr.slice(-2000) }).toEqual({ code: 0, err: '' });
      expect(call.stdout).toContain('rotcepsni');
      expect(call.stdout).toContain('assay/receipt');
    });

    it(`${era} era, OAuth: signs in through the consent page with no pasted token, then reuses its tokens`, async () => {
      const home = mkdtempSync(path.join(dir, `home-${era}-`));
      const callbackPort = await freePort();
      // No keychain here: the Inspector keeps its tokens in a file under HOME, as it does on such machines when told.
      const env = { HOME: home, MCP_AUTO_OPEN_ENABLED: 'true', BROWSER: 'true', MCP_INSPECTOR_SECRET_STORE: 'file' };
      const args = ['--server-url', demo.mcpUrl, '--transport', 'http', '--protocol-era', era, '--callback-url', `http://127.0.0.1:${callbackPort}/oauth/callback`, '--method', 'tools/list'];
      let prompted: Promise<void> | undefined;
      const first = await inspector(args, env, (err) => {
        const url = /navigate to: (\S+)/.exec(err)?.[1];
        if (url && !prompted) prompted = consent(url);
      });
      await prompted;
      expect({ code: first.code, err: first.code === 0 ? '' : first.stderr.slice(-2000) }).toEqual({ code: 0, err: '' });
      expect(first.stdout).toContain('reverse_text');
      expect(prompted).toBeDefined();

      const again = await inspector(args, env);
      expect({ code: again.code, err: again.code === 0 ? '' : again.stderr.slice(-2000) }).toEqual({ code: 0, err: '' });
      expect(again.stderr).not.toMatch(/navigate to/);
      await waitFor('the grant listed for the owner', async () => {
        const res = await fetch(`${new URL(demo.mcpUrl).origin}/oauth/grants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ownerKey: demo.ownerKey }) });
        return ((await res.json()) as { grants: unknown[] }).grants.length > 0 || undefined;
      }, 5000, 200);
    });
  }
});
