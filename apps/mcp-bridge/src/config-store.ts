import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

export interface SavedCredentials {
  gateway: string;
  slug: string;
  credential: string;
  agentId: string;
  savedAt: string;
}

export interface SignInLock {
  pid: number;
  requestId: string;
  approvalUrl: string;
  userCode: string;
  expiresAt: string;
}

/** The settings cannot be read (unreadable or corrupt): sign-in must not guess, it fails with a JSON-RPC error. */
export class SettingsUnreadable extends Error {}
/** The sign-in lock cannot be taken for a reason other than another live window holding it. */
export class LockUnavailable extends Error {}

/**
 * The bridge's files in its config folder: the credential (mode 0600, only
 * the user can read it) and the sign-in lock that keeps two windows from
 * running two sign-ins at once.
 */
export class ConfigStore {
  constructor(readonly dir: string) {}

  private get credentialsPath(): string {
    return path.join(this.dir, 'credentials.json');
  }

  private get lockPath(): string {
    return path.join(this.dir, 'signin.lock');
  }

  /** The saved credential for this gateway and URL; undefined when there is none; SettingsUnreadable when the file is there but unusable. */
  readCredentials(gateway: string, slug: string): SavedCredentials | undefined {
    let text: string;
    try {
      text = readFileSync(this.credentialsPath, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new SettingsUnreadable('the saved settings cannot be read');
    }
    let saved: SavedCredentials;
    try {
      saved = JSON.parse(text) as SavedCredentials;
    } catch {
      throw new SettingsUnreadable('the saved settings are not valid JSON');
    }
    if (typeof saved?.credential !== 'string') throw new SettingsUnreadable('the saved settings have no credential');
    return saved.gateway === gateway && saved.slug === slug ? saved : undefined;
  }

  saveCredentials(c: SavedCredentials): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.credentialsPath}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(c, null, 2)}\n`);
    } finally {
      closeSync(fd);
    }
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.credentialsPath);
  }

  /** Takes the lock, or returns the live lock another window holds. A stale lock (dead process, expired) is replaced. */
  tryLock(lock: Omit<SignInLock, 'pid'>): { taken: true } | { taken: false; heldBy: SignInLock } {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(this.lockPath, 'wx', 0o600);
        try {
          writeSync(fd, JSON.stringify({ ...lock, pid: process.pid }));
        } finally {
          closeSync(fd);
        }
        return { taken: true };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new LockUnavailable('the sign-in lock cannot be created');
      }
      const held = this.readLock();
      if (held && held.pid !== process.pid && alive(held.pid) && Date.parse(held.expiresAt) > Date.now()) return { taken: false, heldBy: held };
      try {
        unlinkSync(this.lockPath);
      } catch {
        throw new LockUnavailable('a stale sign-in lock cannot be removed');
      }
    }
    throw new LockUnavailable('the sign-in lock is held');
  }

  /** Another window's live sign-in, if there is one. */
  liveLockOfOthers(): SignInLock | undefined {
    const held = this.readLock();
    return held && held.pid !== process.pid && alive(held.pid) && Date.parse(held.expiresAt) > Date.now() ? held : undefined;
  }

  releaseLock(): void {
    const held = this.readLock();
    if (held?.pid === process.pid) {
      try {
        unlinkSync(this.lockPath);
      } catch {
        // already gone
      }
    }
  }

  private readLock(): SignInLock | undefined {
    try {
      return JSON.parse(readFileSync(this.lockPath, 'utf8')) as SignInLock;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      if ((e as NodeJS.ErrnoException).code === 'EISDIR' || (e as NodeJS.ErrnoException).code === 'EACCES') throw new LockUnavailable('the sign-in lock cannot be read');
      return undefined;
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
