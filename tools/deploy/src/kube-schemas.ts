import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Manifest } from './manifest-rules';

/** The problems the Kubernetes schemas find in these manifests (see kube-validate.ts, run in its own process). */
export function kubernetesSchemaProblems(manifests: Manifest[]): string[] {
  const out = execFileSync(process.execPath, ['-r', '@swc-node/register', path.join(__dirname, 'kube-validate.ts')], {
    input: JSON.stringify(manifests), encoding: 'utf8', cwd: path.resolve(__dirname, '../../..'),
  });
  return JSON.parse(out) as string[];
}
