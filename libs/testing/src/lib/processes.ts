import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

export const WORKSPACE_ROOT = path.resolve(__dirname, '../../../..');

/** Ports this process has handed out: the OS may give a just-closed port again, and two services on one port collide. */
const handedOut = new Set<number>();

/**
 * A free TCP port on 127.0.0.1, never one this process handed out before: listening on port 0 twice in a row can
 * return the same port, and two services of one system given one port would answer each other's probes — the likely
 * cause (not proven) of a CI run where the distributed gateway's `POST /admin/mcp-urls` answered 404.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await anyFreePort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export interface RunningProcess {
  name: string;
  child: ChildProcess;
  output(): string;
  /** Resolves when a line of output matches. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Signals the process's whole group (only for processes started with `ownGroup`): the crash of a host and its children. */
  killGroup(signal: NodeJS.Signals): Promise<number | null>;
}

export interface ProcessOptions {
  /** Leads its own process group, so `killGroup` takes its children (e.g. an embedded PostgreSQL) down with it. */
  ownGroup?: boolean;
  /** Flags for Node itself, before the entry point (e.g. `--cpu-prof`, which NODE_OPTIONS does not allow). */
  nodeArgs?: string[];
}

/** Starts a TypeScript entry point of this workspace as its own Node process. */
export function startTsProcess(name: string, entry: string, args: string[] = [], env: NodeJS.ProcessEnv = {}, options: ProcessOptions = {}): RunningProcess {
  return startProcess(name, process.execPath, [...(options.nodeArgs ?? []), '-r', '@swc-node/register', path.resolve(WORKSPACE_ROOT, entry), ...args], env, options);
}

export function startProcess(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}, options: ProcessOptions = {}): RunningProcess {
  const child = spawn(command, args, {
    cwd: WORKSPACE_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownGroup ?? false,
  });
  let buffer = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    buffer += d.toString();
    if (buffer.length > 2_000_000) buffer = buffer.slice(-1_000_000);
    for (const l of [...listeners]) l();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    name,
    child,
    output: () => buffer,
    waitForOutput(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = buffer.match(pattern);
          if (m) {
            cleanup();
            resolve(m[0]);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${name}: no output matching ${pattern} within ${timeoutMs} ms. Output:\n${buffer.slice(-4000)}`));
        }, timeoutMs);
        const onExit = () => {
          cleanup();
          reject(new Error(`${name} exited before printing ${pattern}. Output:\n${buffer.slice(-4000)}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off('exit', onExit);
        };
        listeners.add(check);
        child.once('exit', onExit);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async killGroup(signal) {
      if (!options.ownGroup || child.pid === undefined) throw new Error(`${name} was not started in its own process group`);
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group is already gone.
      }
      return exited;
    },
  };
}
