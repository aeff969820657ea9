/**
 * Our rules for the chart's rendered manifests, beyond the Kubernetes schemas: what an operator running this for years
 * expects of every release. Each rule returns the problems it finds ("<kind>/<name>: …"); none means the rule holds.
 */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  [key: string]: unknown;
}

interface Probe { httpGet?: { path?: string; port?: string | number } }
interface Container {
  name: string; args?: string[]; livenessProbe?: Probe; readinessProbe?: Probe; startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; runAsNonRoot?: boolean; runAsUser?: number; capabilities?: { drop?: string[] } };
}
interface PodSpec { containers: Container[]; securityContext?: { runAsNonRoot?: boolean; runAsUser?: number } }
type Rule = (all: Manifest[]) => string[];

const idOf = (m: Manifest) => `${m.kind}/${m.metadata.name}`;
const podOf = (m: Manifest) => ((m.spec?.['template'] as { spec?: PodSpec } | undefined)?.spec) as PodSpec | undefined;
const workloads = (all: Manifest[]) => all.filter((m) => m.kind === 'Deployment' || m.kind === 'Job');
const componentOf = (m: Manifest) => m.metadata.labels?.['app.kubernetes.io/component'] ?? '';

/** Liveness on /health/live and readiness on /health/ready for every service container. */
export const probesRule: Rule = (all) => all.filter((m) => m.kind === 'Deployment').flatMap((m) => (podOf(m)?.containers ?? []).flatMap((c) => [
  ...(c.livenessProbe?.httpGet?.path === '/health/live' ? [] : [`${idOf(m)}: container ${c.name} has no liveness probe on /health/live`]),
  ...(c.readinessProbe?.httpGet?.path === '/health/ready' ? [] : [`${idOf(m)}: container ${c.name} has no readiness probe on /health/ready`]),
]));

/** Non-root (pod or container), read-only root filesystem, no privilege escalation, every capability dropped. */
export const hardenedRule: Rule = (all) => workloads(all).flatMap((m) => {
  const pod = podOf(m);
  return (pod?.containers ?? []).flatMap((c) => {
    const nonRoot = (c.securityContext?.runAsNonRoot ?? pod?.securityContext?.runAsNonRoot) === true && (c.securityContext?.runAsUser ?? pod?.securityContext?.runAsUser ?? 0) !== 0;
    return [
      ...(nonRoot ? [] : [`${idOf(m)}: container ${c.name} may run as root`]),
      ...(c.securityContext?.readOnlyRootFilesystem === true ? [] : [`${idOf(m)}: container ${c.name} has a writable root filesystem`]),
      ...(c.securityContext?.allowPrivilegeEscalation === false ? [] : [`${idOf(m)}: container ${c.name} allows privilege escalation`]),
      ...((c.securityContext?.capabilities?.drop ?? []).includes('ALL') ? [] : [`${idOf(m)}: container ${c.name} keeps Linux capabilities`]),
    ];
  });
});

/** Requests (for the scheduler) and a memory limit (a leak ends in a restart, not a starved node) on every container. */
export const resourcesRule: Rule = (all) => workloads(all).flatMap((m) => (podOf(m)?.containers ?? []).flatMap((c) => [
  ...(c.resources?.requests?.['cpu'] && c.resources.requests['memory'] ? [] : [`${idOf(m)}: container ${c.name} requests no cpu or memory`]),
  ...(c.resources?.limits?.['memory'] ? [] : [`${idOf(m)}: container ${c.name} has no memory limit`]),
]));

/** A PodDisruptionBudget selects every Deployment that runs more than one replica (or is autoscaled). */
export const disruptionBudgetRule: Rule = (all) => {
  const budgets = all.filter((m) => m.kind === 'PodDisruptionBudget').map((m) => componentOf(m));
  const scaled = new Set(all.filter((m) => m.kind === 'HorizontalPodAutoscaler').map((m) => componentOf(m)));
  return all.filter((m) => m.kind === 'Deployment' && (Number(m.spec?.['replicas'] ?? 1) > 1 || scaled.has(componentOf(m))))
    .filter((m) => !budgets.includes(componentOf(m))).map((m) => `${idOf(m)}: runs several replicas without a PodDisruptionBudget`);
};

/** The one-shots are pre-install/pre-upgrade hooks with a deadline and bounded retries, replaced by the next release. */
export const hookRule: Rule = (all) => all.filter((m) => m.kind === 'Job').flatMap((m) => {
  const a = m.metadata.annotations ?? {};
  const hooks = (a['helm.sh/hook'] ?? '').split(',');
  return [
    ...(hooks.includes('pre-install') && hooks.includes('pre-upgrade') ? [] : [`${idOf(m)}: not a pre-install and pre-upgrade hook`]),
    ...((a['helm.sh/hook-delete-policy'] ?? '').includes('before-hook-creation') ? [] : [`${idOf(m)}: an earlier run would block the next (no before-hook-creation)`]),
    ...(typeof m.spec?.['activeDeadlineSeconds'] === 'number' ? [] : [`${idOf(m)}: has no deadline`]),
    ...(typeof m.spec?.['backoffLimit'] === 'number' ? [] : [`${idOf(m)}: retries without bound`]),
  ];
});

/** Each service runs its own entry point of the image; nothing of the chart creates a Secret or bundles a database. */
export const commandRule: Rule = (all) => [
  ...all.filter((m) => m.kind === 'Deployment').flatMap((m) => (podOf(m)?.containers ?? [])
    .filter((c) => (c.args ?? []).join(' ') !== `dist/apps/${componentOf(m)}/main.js`).map((c) => `${idOf(m)}: container ${c.name} does not run dist/apps/${componentOf(m)}/main.js`)),
  ...all.filter((m) => m.kind === 'Secret').map((m) => `${idOf(m)}: the chart creates a Secret (secrets come from existing ones)`),
  ...all.filter((m) => m.kind === 'StatefulSet').map((m) => `${idOf(m)}: a bundled stateful workload (PostgreSQL and Kafka are external)`),
];

export const MANIFEST_RULES: Record<string, Rule> = {
  probes: probesRule, hardened: hardenedRule, resources: resourcesRule, disruptionBudget: disruptionBudgetRule, hooks: hookRule, commands: commandRule,
};

export function manifestProblems(all: Manifest[]): string[] {
  return Object.values(MANIFEST_RULES).flatMap((rule) => rule(all));
}
