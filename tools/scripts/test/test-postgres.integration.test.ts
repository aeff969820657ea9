/**
 * `npm test`'s PostgreSQL. When nothing answers at TEST_POSTGRES_URL, tools/scripts/test-postgres.ts starts the
 * PostgreSQL from npm on that port (taking 400 connections: two end-to-end suites at once), hands the tests its URL, and
 * stops it on SIGTERM; a server that answers with enough connections is handed over unchanged; one with too few (the
 * stock 100) is left alone and the one from npm starts on the next port.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort, startTsProcess, waitFor } from '@tollgate/testing';

jest.setTimeout(180_000);

const connects = async (url: string) => {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return (await c.query('SELECT 1 AS one')).rows[0].one === 1;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
};

describe('the test PostgreSQL', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-testpg-'));
    chmodSync(dir, 0o755); // as root, the engine runs PostgreSQL as its own user
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('starts the PostgreSQL from npm where none answers, and stops it on SIGTERM', async () => {
    const port = await freePort();
    const wanted = `postgres://postgres@127.0.0.1:${port}/postgres`;
    expect(await connects(wanted)).toBe(false);
    const p = startTsProcess('test-postgres', 'tools/scripts/test-postgres.ts', [path.join(dir, 'url'), dir], { TEST_POSTGRES_URL: wanted });
    await p.waitForOutput(/\[postgres\] ready on port/, 150_000);
    const url = readFileSync(path.join(dir, 'url'), 'utf8');
    expect(new URL(url).port).toBe(String(port));
    expect(await connects(url)).toBe(true);
    expect(await p.stop('SIGTERM')).toBe(0);
    await waitFor('the server stopped', async () => !(await connects(url)), 30_000, 250);
  });

  const start = (wanted: string, into: string, connections = '400') =>
    startTsProcess('test-postgres', 'tools/scripts/test-postgres.ts', [path.join(into, 'url'), into], { TEST_POSTGRES_URL: wanted, TEST_POSTGRES_CONNECTIONS: connections });

  it('uses a server that answers with enough connections as it is, starting nothing', async () => {
    const port = await freePort();
    const ours = start(`postgres://postgres@127.0.0.1:${port}/postgres`, dir);
    await ours.waitForOutput(/\[postgres\] ready on port/, 150_000);
    const url = readFileSync(path.join(dir, 'url'), 'utf8');
    const other = mkdtempSync(path.join(os.tmpdir(), 'tollgate-testpg-'));
    chmodSync(other, 0o755);
    try {
      const p = start(url, other);
      await p.waitForOutput(/\[postgres\] using the server at/, 60_000);
      expect(readFileSync(path.join(other, 'url'), 'utf8')).toBe(url);
      expect(existsSync(path.join(other, 'pg'))).toBe(false);
      await p.stop();
    } finally {
      await ours.stop('SIGTERM');
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('leaves a server with too few connections alone and starts its own on the next port', async () => {
    const port = await freePort();
    const small = start(`postgres://postgres@127.0.0.1:${port}/postgres`, dir, '50');
    await small.waitForOutput(/\[postgres\] ready on port/, 150_000);
    const other = mkdtempSync(path.join(os.tmpdir(), 'tollgate-testpg-'));
    chmodSync(other, 0o755);
    try {
      const p = start(`postgres://postgres:postgres@127.0.0.1:${port}/postgres`, other);
      await p.waitForOutput(/takes 50 connections, not 400.*\n.*\[postgres\] ready on port/s, 150_000);
      const url = readFileSync(path.join(other, 'url'), 'utf8');
      expect(new URL(url).port).toBe(String(port + 1));
      const c = new Client({ connectionString: url });
      await c.connect();
      expect((await c.query('SHOW max_connections')).rows[0].max_connections).toBe('400');
      await c.end();
      expect(await p.stop('SIGTERM')).toBe(0);
    } finally {
      await small.stop('SIGTERM');
      rmSync(other, { recursive: true, force: true });
    }
  });
});
