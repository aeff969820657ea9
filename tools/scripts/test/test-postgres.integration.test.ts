/**
 * `npm test` on a machine without a PostgreSQL server. When nothing answers at TEST_POSTGRES_URL,
 * tools/scripts/test-postgres.ts starts the PostgreSQL from npm on that port, hands the tests its URL, and stops it on
 * SIGTERM; when a server answers, it hands that URL over unchanged and starts nothing.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort, startTsProcess, TEST_POSTGRES_URL, waitFor } from '@tollgate/testing';

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

  it('uses a server that answers as it is, starting nothing', async () => {
    const p = startTsProcess('test-postgres', 'tools/scripts/test-postgres.ts', [path.join(dir, 'url'), dir], { TEST_POSTGRES_URL });
    await p.waitForOutput(/\[postgres\] using the server at/, 60_000);
    expect(readFileSync(path.join(dir, 'url'), 'utf8')).toBe(TEST_POSTGRES_URL);
    expect(existsSync(path.join(dir, 'pg'))).toBe(false);
    await p.stop();
  });
});
