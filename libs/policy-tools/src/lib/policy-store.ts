import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { POLICY_LIMITS } from '@tollgate/policy';
import { PolicyToolError } from './policy-tool-error';

/**
 * Reads policy files from one allowed root. Any path that would leave it — an
 * absolute path, `..`, or a symbolic link pointing out — is E_PERMISSION_DENIED;
 * the error never echoes the resolved location.
 */
export class PolicyStore {
  private rootReal?: string;

  constructor(private readonly root: string) {}

  async read(requested: string): Promise<string> {
    if (typeof requested !== 'string' || requested.length === 0 || requested.length > 4096 || requested.includes('\0')) {
      throw new PolicyToolError('E_PERMISSION_DENIED', 'The policy path is not allowed.');
    }
    if (path.isAbsolute(requested) || /^[A-Za-z]:[\\/]/.test(requested)) throw new PolicyToolError('E_PERMISSION_DENIED', 'The policy path must be relative to the policy root.');
    // Lexical check first: a path that leaves the root is refused whether or not the root exists yet.
    if (!inside(path.resolve(this.root), path.resolve(this.root, requested))) throw new PolicyToolError('E_PERMISSION_DENIED', 'The policy path leaves the policy root.');
    let root: string;
    try {
      root = this.rootReal ??= await realpath(this.root);
    } catch {
      // No policy folder at all (an owner who has none yet): nothing can be found in it.
      throw new PolicyToolError('E_POLICY_NOT_FOUND', 'The policy file does not exist.');
    }
    const joined = path.resolve(root, requested);
    if (!inside(root, joined)) throw new PolicyToolError('E_PERMISSION_DENIED', 'The policy path leaves the policy root.');
    let real: string;
    try {
      real = await realpath(joined);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new PolicyToolError('E_POLICY_NOT_FOUND', 'The policy file does not exist.');
      throw new PolicyToolError('E_POLICY_READ', 'The policy file could not be read.');
    }
    if (!inside(root, real)) throw new PolicyToolError('E_PERMISSION_DENIED', 'The policy path leaves the policy root.');
    const info = await stat(real).catch(() => undefined);
    if (!info?.isFile()) throw new PolicyToolError('E_POLICY_READ', 'The policy path is not a regular file.');
    if (info.size > POLICY_LIMITS.maxPolicyBytes) throw new PolicyToolError('E_POLICY_READ', `The policy file is larger than ${POLICY_LIMITS.maxPolicyBytes} bytes.`);
    try {
      const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        const buf = Buffer.alloc(POLICY_LIMITS.maxPolicyBytes + 1);
        const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
        if (bytesRead > POLICY_LIMITS.maxPolicyBytes) throw new PolicyToolError('E_POLICY_READ', `The policy file is larger than ${POLICY_LIMITS.maxPolicyBytes} bytes.`);
        return buf.subarray(0, bytesRead).toString('utf8');
      } finally {
        await handle.close();
      }
    } catch (e) {
      if (e instanceof PolicyToolError) throw e;
      throw new PolicyToolError('E_POLICY_READ', 'The policy file could not be read.');
    }
  }
}

function inside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}
