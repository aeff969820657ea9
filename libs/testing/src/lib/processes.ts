import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

export const WORKSPACE_ROOT = path.resolve(__dirname, '../../../..');

/** Ports this process has handed out: the OS may give a just-closed port again, and two services on one port collide. */
const handedOut = new Set<number>();

/** The ports under the ephemeral range's start (Linux: /proc/sys/net/ipv4/ip_local_port_range, 32768 by default). */
const BELOW_EPHEMERAL = ((): [number, number] => {
  let start = 32768;
  try {
    start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || start;
  } catch {
    // Not Linux: the IANA dynamic range starts at 49152; 32768 is below it too.
  }
  return [Math.max(1024, start - 12_000), start - 1];
})();

/**
 * A free TCP port on 127.0.0.1, never one this process handed out before, and below the kernel's ephemeral range:
 * a port from that range (what listening on port 0 returns) can be taken between this check and the service's bind by
 * any socket the OS numbers itself — a service started with port 0 (the embedded host's sample providers), or an
 * outgoing connection — which CI once saw as EADDRINUSE. Below the range only an explicit bind can take it.
 * Two services of one system given one port would answer each other's probes, hence the handed-out set.
 */
export async function freePort(): Promise<number> {
  const [low, high] = BELOW_EPHEMERAL;
  for (let tries = 0; tries < 1000; tries++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${low} and ${high}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
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
