import { spawn } from 'node:child_process';

/** Set in the host the launcher started, so it runs instead of launching again. */
const OWN_GROUP = 'TOLLGATE_OWN_PROCESS_GROUP';

/**
 * On a terminal, Ctrl-C signals the whole foreground process group — the embedded PostgreSQL too, which then drops
 * every connection while the services still finish their in-flight events (errors, stack traces, a stop that is
 * not in order). So, on a terminal only, this process becomes a launcher: the host runs as its child in a process
 * group of its own (with PostgreSQL), the launcher forwards SIGINT, SIGTERM and SIGHUP to it, and the host stops in
 * order — requests, consumers, outboxes, pools, then PostgreSQL — and the launcher exits with its code.
 * Off a terminal (a service manager, a test, a pipe) nothing changes: signals and `kill -9` of the group reach the
 * host and its PostgreSQL as before. True when this process is the launcher and must not start the host itself.
 */
export function launchedInOwnGroup(env: NodeJS.ProcessEnv = process.env): boolean {
  if (!process.stdin.isTTY || !process.stdout.isTTY || env[OWN_GROUP] === '1') return false;
  const host = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { detached: true, stdio: 'inherit', env: { ...env, [OWN_GROUP]: '1' } });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => host.kill(signal === 'SIGHUP' ? 'SIGTERM' : signal));
  host.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + 2 : 0)));
  return true;
}
