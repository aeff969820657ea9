import { type Manifest, MANIFEST_RULES, manifestProblems } from './manifest-rules';

/** A Deployment that keeps every rule; each case breaks one thing. */
function deployment(replicas = 2): Manifest {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'tg-gateway', labels: { 'app.kubernetes.io/component': 'gateway' } },
    spec: {
      replicas,
      template: { spec: {
        securityContext: { runAsNonRoot: true, runAsUser: 10001 },
        containers: [{
          name: 'gateway', args: ['dist/apps/gateway/main.js'],
          livenessProbe: { httpGet: { path: '/health/live' } }, readinessProbe: { httpGet: { path: '/health/ready' } },
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
          securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        }],
      } },
    },
  };
}
const budget: Manifest = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'tg-gateway', labels: { 'app.kubernetes.io/component': 'gateway' } } };
const job = (annotations: Record<string, string>, spec: Record<string, unknown>): Manifest => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'tg-migrate', annotations }, spec: { ...spec, template: deployment().spec!['template'] } });
const goodJob = () => job({ 'helm.sh/hook': 'pre-install,pre-upgrade', 'helm.sh/hook-delete-policy': 'before-hook-creation' }, { activeDeadlineSeconds: 600, backoffLimit: 2 });
const container = (m: Manifest) => ((m.spec!['template'] as { spec: { containers: Record<string, unknown>[] } }).spec.containers[0]!);

describe('the rules for rendered manifests', () => {
  it('hold for a hardened, probed, budgeted Deployment and a hook Job', () => {
    expect(manifestProblems([deployment(), budget, goodJob()])).toEqual([]);
  });

  it.each<[string, keyof typeof MANIFEST_RULES, (all: Manifest[]) => Manifest[], RegExp]>([
    ['no readiness probe', 'probes', ([d]) => { delete container(d!)['readinessProbe']; return [d!]; }, /no readiness probe/],
    ['liveness on another path', 'probes', ([d]) => { container(d!)['livenessProbe'] = { httpGet: { path: '/' } }; return [d!]; }, /no liveness probe/],
    ['root', 'hardened', ([d]) => { (d!.spec!['template'] as { spec: { securityContext: object } }).spec.securityContext = { runAsUser: 0, runAsNonRoot: true }; return [d!]; }, /may run as root/],
    ['a writable root', 'hardened', ([d]) => { (container(d!)['securityContext'] as { readOnlyRootFilesystem: boolean }).readOnlyRootFilesystem = false; return [d!]; }, /writable root/],
    ['kept capabilities', 'hardened', ([d]) => { (container(d!)['securityContext'] as { capabilities: object }).capabilities = {}; return [d!]; }, /capabilities/],
    ['no memory limit', 'resources', ([d]) => { (container(d!)['resources'] as { limits: object }).limits = {}; return [d!]; }, /no memory limit/],
    ['two replicas, no budget', 'disruptionBudget', ([d]) => [d!], /without a PodDisruptionBudget/],
    ['a Job that is no hook', 'hooks', () => [job({ 'helm.sh/hook-delete-policy': 'before-hook-creation' }, { activeDeadlineSeconds: 1, backoffLimit: 1 })], /not a pre-install and pre-upgrade hook/],
    ['a Job without a deadline', 'hooks', () => [job({ 'helm.sh/hook': 'pre-install,pre-upgrade', 'helm.sh/hook-delete-policy': 'before-hook-creation' }, { backoffLimit: 1 })], /no deadline/],
    ['another entry point', 'commands', ([d]) => { container(d!)['args'] = ['dist/apps/ledger/main.js']; return [d!]; }, /does not run dist\/apps\/gateway\/main.js/],
    ['a Secret in the chart', 'commands', () => [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }], /creates a Secret/],
  ])('%s breaks the %s rule', (_, rule, breakIt, message) => {
    const problems = MANIFEST_RULES[rule]!(breakIt([deployment()]));
    expect(problems).toEqual([expect.stringMatching(message)]);
  });

  it('asks no budget of a single replica', () => {
    expect(MANIFEST_RULES['disruptionBudget']!([deployment(1)])).toEqual([]);
  });
});
