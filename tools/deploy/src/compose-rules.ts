/**
 * Our rules for compose.yaml, beyond the Compose specification's schema. Each returns its problems; none: it holds.
 */
export interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string | number | boolean | null>;
  secrets?: string[];
  ports?: unknown[];
  deploy?: { replicas?: number };
  depends_on?: Record<string, { condition?: string }>;
  healthcheck?: { test?: string[] };
  restart?: string;
  user?: string;
  read_only?: boolean;
  profiles?: string[];
}
export interface ComposeFile { services: Record<string, ComposeService>; secrets?: Record<string, { file?: string }> }

/** The variables each command of our image reads: a config class's, or an ops script's own list. */
export type KnownVariables = (command: string) => ReadonlySet<string> | undefined;

const OURS = 'dist/';
const ours = (s: ComposeService) => (s.command?.[0] ?? '').startsWith(OURS);
const oneShot = (s: ComposeService) => s.restart === 'no';

/** Every variable a service of ours is given is one its config class declares (NAME_FILE counts as NAME). */
export function variablesRule(file: ComposeFile, known: KnownVariables): string[] {
  return Object.entries(file.services).filter(([, s]) => ours(s)).flatMap(([name, s]) => {
    const declared = known(s.command![0]!);
    if (!declared) return [`${name}: runs ${s.command![0]}, which is not an entry point of the image`];
    return Object.keys(s.environment ?? {}).map((k) => k.replace(/_FILE$/, '')).filter((k) => !declared.has(k))
      .map((k) => `${name}: ${k} is not a variable of ${s.command![0]}`);
  });
}

/** Only the proxy publishes a port; a replicated service never does (the replicas would fight over it). */
export function portsRule(file: ComposeFile, proxy: string): string[] {
  return Object.entries(file.services).flatMap(([name, s]) => [
    ...((s.ports?.length ?? 0) > 0 && name !== proxy ? [`${name}: publishes a host port (only ${proxy} may)`] : []),
    ...((s.ports?.length ?? 0) > 0 && (s.deploy?.replicas ?? 1) > 1 ? [`${name}: replicated and publishes a host port`] : []),
  ]);
}

/** The one-shots (topics, migrate) run once and every long-running service of ours waits for both to succeed. */
export function oneShotsRule(file: ComposeFile): string[] {
  const shots = Object.entries(file.services).filter(([, s]) => ours(s) && oneShot(s)).map(([n]) => n);
  const problems = shots.length === 0 ? ['no one-shot service (topics, migrate) gates the others'] : [];
  for (const [name, s] of Object.entries(file.services)) {
    if (!ours(s) || oneShot(s) || s.profiles?.length) continue;
    for (const shot of shots) {
      if (s.depends_on?.[shot]?.condition !== 'service_completed_successfully') problems.push(`${name}: starts without waiting for ${shot} to complete`);
    }
    if (!s.healthcheck?.test?.length) problems.push(`${name}: has no health check`);
  }
  return problems;
}

/** A NAME_FILE points into /run/secrets at a secret the service mounts and the file declares; images run as non-root. */
export function secretsRule(file: ComposeFile): string[] {
  return Object.entries(file.services).flatMap(([name, s]) => [
    ...Object.entries(s.environment ?? {}).filter(([k]) => k.endsWith('_FILE')).flatMap(([k, v]) => {
      const secret = String(v).replace(/^\/run\/secrets\//, '');
      if (secret === String(v) || !(s.secrets ?? []).includes(secret) || !file.secrets?.[secret]?.file) return [`${name}: ${k} does not name a declared, mounted secret`];
      return [];
    }),
    ...(ours(s) && (!s.user || /^0(:|$)|^root/.test(s.user) || s.read_only !== true) ? [`${name}: not a non-root user on a read-only root`] : []),
  ]);
}

export function composeProblems(file: ComposeFile, known: KnownVariables, proxy = 'proxy'): string[] {
  return [...variablesRule(file, known), ...portsRule(file, proxy), ...oneShotsRule(file), ...secretsRule(file)];
}
