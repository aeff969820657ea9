import { existsSync, readFileSync } from 'node:fs';
import { type RunningProcess, startProcess, WORKSPACE_ROOT } from './processes';
import { waitFor } from './wait-for';

/** The user a container image of this project runs as is any non-root one; `nobody` is on every Linux. */
export const SANDBOX_UID = 65534;

/** Whether this machine can make a container's conditions without a container engine (root with util-linux). */
export function canSandbox(): boolean {
  return process.getuid?.() === 0 && existsSync('/usr/bin/unshare') && existsSync('/usr/bin/setpriv');
}

/**
 * Runs a command the way a container runtime runs an image's command, with no container engine: in its own PID
 * namespace as **PID 1** (no init above it: it must stop on SIGTERM by itself, which the kernel delivers to PID 1 only
 * when it handles it), as a **non-root** user, on a **read-only root** filesystem with a small writable `/tmp` (the
 * emptyDir of a pod). `stop` signals that PID 1 itself, as `docker stop` and the kubelet do.
 */
export function startSandboxed(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}): SandboxedProcess {
  const p = startProcess(name, 'unshare', ['--pid', '--mount', '--mount-proc', '--kill-child', '--', '/bin/sh', '-c', sandboxScript(), command, ...args], env);
  const innerPid = async () => waitFor(`${name}'s PID 1`, () => {
    const children = p.child.pid === undefined ? '' : readFileSync(`/proc/${p.child.pid}/task/${p.child.pid}/children`, 'utf8').trim();
    return children ? Number(children.split(/\s+/)[0]) : undefined;
  }, 10_000, 20);
  const exited = new Promise<number | null>((resolve) => {
    if (p.child.exitCode !== null) resolve(p.child.exitCode);
    else p.child.once('exit', (code) => resolve(code));
  });
  return {
    ...p,
    innerPid,
    async stop(signal = 'SIGTERM') {
      if (p.child.exitCode !== null || p.child.signalCode !== null) return p.child.exitCode;
      const pid = await innerPid().catch(() => undefined);
      if (pid !== undefined) process.kill(pid, signal);
      const timer = setTimeout(() => p.child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * The mounts, inside the new mount namespace: a fresh tmpfs on /tmp, then the whole root read-only. A workspace that
 * itself lives under /tmp (a CI checkout) would vanish under that tmpfs, so it is carried across it first (bound
 * aside on /mnt, then back at its own path, read-only too) — the image's /app plays that part in a container.
 */
function sandboxScript(): string {
  const keep = WORKSPACE_ROOT.startsWith('/tmp/') ? WORKSPACE_ROOT.replace(/'/g, '') : '';
  const lines = keep
    ? [`mount --bind '${keep}' /mnt`, 'mount -t tmpfs -o size=64m,mode=1777 tmpfs /tmp', `mkdir -p '${keep}'`, `mount --bind /mnt '${keep}'`,
      'mount -o remount,bind,ro /', `mount -o remount,bind,ro '${keep}'`]
    : ['mount -t tmpfs -o size=64m,mode=1777 tmpfs /tmp', 'mount -o remount,bind,ro /'];
  return [...lines, `exec setpriv --reuid=${SANDBOX_UID} --regid=${SANDBOX_UID} --clear-groups --no-new-privs "$0" "$@"`].join(' && ');
}

export interface SandboxedProcess extends RunningProcess {
  /** The host's PID of the sandboxed command (PID 1 inside its namespace). */
  innerPid(): Promise<number>;
}

/** What the kernel says of a running process: its PID inside its own namespace, its user, and whether `/` is read-only. */
export function sandboxFacts(hostPid: number): { pidInside: number; uid: number; rootReadOnly: boolean } {
  const status = readFileSync(`/proc/${hostPid}/status`, 'utf8');
  const nspid = (status.match(/^NSpid:\s+(.+)$/m)?.[1] ?? '').trim().split(/\s+/).map(Number);
  const uid = Number(status.match(/^Uid:\s+(\d+)/m)?.[1]);
  const root = readFileSync(`/proc/${hostPid}/mountinfo`, 'utf8').split('\n').map((l) => l.split(' ')).find((f) => f[4] === '/');
  return { pidInside: nspid[nspid.length - 1] ?? Number.NaN, uid, rootReadOnly: (root?.[5] ?? '').split(',').includes('ro') };
}
