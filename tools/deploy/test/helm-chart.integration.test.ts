/**
 * The Helm chart, validated offline: `helm lint --strict` and `helm template` by the helm shipped in npm, every
 * rendered manifest against the Kubernetes API's schemas (unknown fields included) and our rules (probes, non-root,
 * read-only root, PDB with replicas > 1, hook annotations, one entry point per service), the values schema's refusals,
 * and a snapshot of the default render (a change to it is reviewed, never silent).
 */
import { parseAllDocuments } from 'yaml';
import { CHART_DIR, helm, kubernetesSchemaProblems, type Manifest, manifestProblems, renderChart } from '../src';

jest.setTimeout(120_000);

const ALL_SWITCHES = {
  'serviceMonitor.enabled': true, 'networkPolicy.enabled': true, 'ingress.enabled': true, 'services.gateway.autoscaling.enabled': true,
  'services.discovery.replicas': 3,
};

function manifests(out: string): Manifest[] {
  return parseAllDocuments(out).map((d) => d.toJSON() as Manifest | null).filter((m): m is Manifest => m !== null);
}
const named = (all: Manifest[], kind: string) => all.filter((m) => m.kind === kind).map((m) => m.metadata.name).sort();

describe('the Helm chart (deploy/helm/tollgate)', () => {
  it('passes helm lint --strict, with its defaults and with every switch on', () => {
    expect(helm(['lint', '--strict', CHART_DIR])).toEqual({ code: 0, out: expect.stringContaining('0 chart(s) failed') });
    const set = Object.entries(ALL_SWITCHES).flatMap(([k, v]) => ['--set', `${k}=${String(v)}`]);
    expect(helm(['lint', '--strict', CHART_DIR, ...set]).code).toBe(0);
  });

  it('renders by default a Deployment, Service and (with 2 replicas) a PDB per service, and the two hook Jobs — valid and by our rules', () => {
    const { code, out } = renderChart();
    expect(code).toBe(0);
    const all = manifests(out);
    const services = ['discovery', 'execution', 'gateway', 'ledger', 'payment', 'settlement'];
    expect(named(all, 'Deployment')).toEqual(services.map((s) => `tg-tollgate-${s}`));
    expect(named(all, 'Service')).toEqual(services.map((s) => `tg-tollgate-${s}`));
    // discovery runs one replica by default: no budget for it (a PDB of one pod would block every node drain).
    expect(named(all, 'PodDisruptionBudget')).toEqual(services.filter((s) => s !== 'discovery').map((s) => `tg-tollgate-${s}`));
    expect(named(all, 'Job')).toEqual(['tg-tollgate-migrate', 'tg-tollgate-topics']);
    expect(named(all, 'Secret')).toEqual([]);
    expect(kubernetesSchemaProblems(all)).toEqual([]);
    expect(manifestProblems(all)).toEqual([]);
    expect(out).toMatchSnapshot();
  });

  it('with every switch on: ServiceMonitor, NetworkPolicies, Ingress, HPA — valid and by our rules', () => {
    const { code, out } = renderChart(ALL_SWITCHES);
    expect(code).toBe(0);
    const all = manifests(out);
    expect(named(all, 'ServiceMonitor')).toEqual(['tg-tollgate']);
    expect(named(all, 'NetworkPolicy')).toHaveLength(6);
    expect(named(all, 'Ingress')).toEqual(['tg-tollgate-gateway']);
    expect(named(all, 'HorizontalPodAutoscaler')).toEqual(['tg-tollgate-gateway']);
    // The autoscaled gateway leaves replicas to the HPA; discovery at 3 replicas now has its budget.
    expect(all.find((m) => m.kind === 'Deployment' && m.metadata.name === 'tg-tollgate-gateway')?.spec?.['replicas']).toBeUndefined();
    expect(named(all, 'PodDisruptionBudget')).toContain('tg-tollgate-discovery');
    expect(kubernetesSchemaProblems(all)).toEqual([]);
    expect(manifestProblems(all)).toEqual([]);
  });

  it('runs the migration as a pre-install/pre-upgrade hook with a stable name, a deadline, and existing Secrets only', () => {
    const job = manifests(renderChart().out).find((m) => m.metadata.name === 'tg-tollgate-migrate')!;
    expect(job.metadata.annotations).toEqual(expect.objectContaining({ 'helm.sh/hook': 'pre-install,pre-upgrade' }));
    const spec = job.spec as { activeDeadlineSeconds: number; template: { spec: { containers: { args: string[]; env: { name: string; valueFrom?: unknown }[] }[] } } };
    expect(spec.activeDeadlineSeconds).toBe(600);
    expect(spec.template.spec.containers[0]!.args).toEqual(['dist/tools/ops/main.js', 'migrate', 'all']);
    expect(spec.template.spec.containers[0]!.env.find((e) => e.name === 'DATABASE_URL')?.valueFrom).toEqual({ secretKeyRef: { name: 'tollgate-database', key: 'url' } });
  });

  it.each([
    ['root', { 'podSecurityContext.runAsNonRoot': false }, /runAsNonRoot/],
    ['a misspelt key', { 'services.gateway.replica': 3 }, /additional properties 'replica' not allowed/],
    ['a broker list without ports', { 'kafka.brokers': 'kafka' }, /kafka\/brokers/],
    ['a public URL with a path', { 'gateway.publicUrl': 'https://x.example/mcp' }, /publicUrl/],
  ])('refuses %s through values.schema.json', (_, set, message) => {
    const r = renderChart(set);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(message);
  });
});
