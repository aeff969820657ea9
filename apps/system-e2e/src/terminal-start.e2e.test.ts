/**
 * A first run a person can read: `npm start`'s host on a real terminal (a pseudo-terminal from `script`), as a person
 * starts it. Readable lines, only what matters before the banner, amounts as "100.00 USDC"; an expected refusal is one
 * line at info with its code; Ctrl-C (the terminal's ^C, which signals the whole foreground group) stops the host in
 * order — services, then PostgreSQL — with no warning, error or stack trace.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitFor, WORKSPACE_ROOT } from '@tollgate/testing';

jest.setTimeout(180_000);

// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

describe('npm start on a terminal', () => {
  let dir: string;
  let term: ChildProcessWithoutNullStreams;
  let out = '';
  let exited: Promise<number | null>;
  let base: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-terminal-'));
    chmodSync(dir, 0o755); // the embedded PostgreSQL runs as its own user when we are root
    const [port, pgPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    // `exec`: the terminal's foreground process is the host itself, as when a person starts it. `script` runs the
    // command through $SHELL -c, and a shell that does not exec a lone command (dash, the usual /bin/sh) would stay in
    // the foreground, die of the ^C itself and report 130 whatever the host did.
    const host = `exec ${process.execPath} -r @swc-node/register apps/embedded/src/main.ts`;
    // The defaults a person gets: no LOG_FORMAT, no LOG_LEVEL.
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: path.join(dir, 'data'), PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), TERM: 'xterm' };
    delete env['LOG_FORMAT'];
    delete env['LOG_LEVEL'];
    term = spawn('script', ['-qfec', host, '/dev/null'], { cwd: WORKSPACE_ROOT, env });
    term.stdout.on('data', (b: Buffer) => void (out += plain(b.toString())));
    exited = new Promise((r) => term.on('exit', (code) => r(code)));
    const died = exited.then((code) => Promise.reject(new Error(`the host exited (${code})`)));
    died.catch(() => undefined);
    await Promise.race([waitFor('the banner', async () => out.includes('Tollgate is running') || undefined, 150_000, 500), died]).catch((e: Error) => {
      throw new Error(`${e.message}; the terminal showed:\n${out.slice(-3000)}`);
    });
  });

  afterAll(async () => {
    term.stdin.end();
    if (term.exitCode === null) term.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts with readable lines, only what matters, and amounts in units', () => {
    const before = out.slice(0, out.indexOf('Tollgate is running')).split('\n').filter((l) => l.trim());
    const logLines = before.filter((l) => /^\[\d\d:\d\d:\d\d\] [A-Z]+: /.test(l));
    expect(before.filter((l) => l.trimStart().startsWith('{"'))).toEqual([]); // no JSON on a terminal
    expect(logLines.length).toBeGreaterThan(3);
    expect(logLines.length).toBeLessThan(25); // Nest's narration (~130 lines) is at debug
    expect(logLines.filter((l) => !/ (INFO): /.test(l))).toEqual([]);
    expect(out).toMatch(/Wallet: +100\.00 USDC; reverse_text costs 0\.25 USDC/);
  });

  it('logs an expected refusal as one line at info with its code, no stack trace', async () => {
    const mark = out.length;
    const res = await fetch(`${base}/mcp/demo`, { method: 'POST', headers: { origin: 'http://evil.example', 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(403);
    await waitFor('the refusal logged', async () => out.slice(mark).includes('MCP_ORIGIN_NOT_ALLOWED') || undefined, 5000, 100);
    const lines = out.slice(mark).split('\n').filter((l) => l.trim());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: embedded \| request refused: Host or Origin not allowed.*"code":"MCP_ORIGIN_NOT_ALLOWED"/);
  });

  it('stops in order on ^C: quietly, PostgreSQL last, within seconds', async () => {
    const mark = out.length;
    const t0 = Date.now();
    term.stdin.write('\x03');
    const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 20_000))]);
    expect(code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const stop = out.slice(mark);
    expect(stop).toContain('shutting down');
    expect(stop).toMatch(/INFO: embedded \| stopped/);
    expect(stop).not.toMatch(/WARN|ERROR|FATAL|^\s+at /m);
    expect(existsSync(path.join(dir, 'data', 'pg', 'postmaster.pid'))).toBe(false); // PostgreSQL shut down cleanly
  });
});
