import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureDatabase } from '@tollgate/persistence';
import { freePort, startTsProcess } from './processes';

/**
 * A PostgreSQL server a test starts, stops and restarts itself (never the machine's): the PostgreSQL from npm, run by
 * `libs/testing/src/own-postgres/main.ts` in its own process.
 */
export interface OwnPostgres {
  port: number;
  /** A URL of database `name` on it. */
  url(name: string): string;
  /** Creates database `name` (if new) and returns its URL. */
  database(name: string): Promise<string>;
  /** Stops the server: every connection is dropped and new ones are refused until `start`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  destroy(): Promise<void>;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-own-pg-'));
  chmodSync(dir, 0o755); // as root, the engine runs PostgreSQL as its own user
  const port = await freePort();
  const p = startTsProcess('own-postgres', 'libs/testing/src/own-postgres/main.ts', [dir, String(port)]);
  const changed = async (signal: NodeJS.Signals, word: 'up' | 'down') => {
    const seen = (p.output().match(new RegExp(`\\[own-pg\\] ${word}`, 'g')) ?? []).length;
    p.child.kill(signal);
    await waitForCount(p.output, word, seen + 1);
  };
  await p.waitForOutput(/\[own-pg\] up/, 150_000);
  const url = (name: string) => `postgres://postgres:postgres@127.0.0.1:${port}/${name}`;
  return {
    port,
    url,
    async database(name) {
      await ensureDatabase(url(name));
      return url(name);
    },
    stop: () => changed('SIGUSR1', 'down'),
    start: () => changed('SIGUSR2', 'up'),
    async destroy() {
      await p.stop('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForCount(output: () => string, word: string, count: number): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if ((output().match(new RegExp(`\\[own-pg\\] ${word}`, 'g')) ?? []).length >= count) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`own PostgreSQL did not report "${word}" in 60 s:\n${output().slice(-2000)}`);
}
