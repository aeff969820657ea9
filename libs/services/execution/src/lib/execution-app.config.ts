import { IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { UPSTREAM_CREDENTIALS_DESCRIPTION, UPSTREAM_CREDENTIALS_PATTERN } from '@tollgate/mcp-runtime';
import { CommonConfig, type ConfigBase, EnvVar } from '@tollgate/config';

/** The reconciler's settings, shared by the execution app's config and the embedded host's. */
export function WithReconcilerConfig<B extends ConfigBase>(Base: B) {
  class ReconcilerConfig extends Base {
    @EnvVar({ description: 'How often (ms) the reconciler looks for interrupted attempts and unknown outcomes.' })
    @IsInt() @Min(100) @Max(600_000)
    EXECUTION_RECONCILE_INTERVAL_MS = 2000;

    @EnvVar({ description: 'How long (ms) past its deadline a dispatched attempt with no result counts as interrupted, and is reconciled by its operation key.' })
    @IsInt() @Min(0) @Max(600_000)
    EXECUTION_STALL_GRACE_MS = 5000;

    @EnvVar({ description: 'How many calls to one provider each execution process runs at once; more wait their turn (in order, until their deadline: then the call is not sent and may fall back to another provider). Other providers are never held up.' })
    @IsInt() @Min(1) @Max(10_000)
    EXECUTION_PROVIDER_CONCURRENCY = 64;

    @EnvVar({ description: 'Per-provider exceptions to EXECUTION_PROVIDER_CONCURRENCY: providerId=limit, comma-separated.', example: 'slow-tools=8' })
    @Matches(/^([A-Za-z0-9._-]+=\d{1,5}(\s*,\s*[A-Za-z0-9._-]+=\d{1,5})*)?$/, { message: 'must be providerId=limit[,providerId=limit...]' })
    EXECUTION_PROVIDER_CONCURRENCY_OVERRIDES = '';
  }
  return ReconcilerConfig;
}

/** Every variable the execution app reads, validated at boot. */
export class ExecutionAppConfig extends WithReconcilerConfig(CommonConfig) {
  @EnvVar({ description: 'HTTP port of the execution app.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3002;

  @EnvVar({ description: 'Bearer token of the reconciliation admin API used by the ops CLI (at least 16 characters); unset: the API refuses every call.', secret: true, type: 'string' })
  @IsOptional() @IsString() @MinLength(16)
  EXECUTION_ADMIN_TOKEN?: string;

  @EnvVar({ description: UPSTREAM_CREDENTIALS_DESCRIPTION, secret: true, example: '' })
  @Matches(UPSTREAM_CREDENTIALS_PATTERN, { message: 'must be origin=token[,origin=token...] with tokens of at least 16 characters' })
  UPSTREAM_CREDENTIALS = '';
}

/** The per-provider bound of concurrent calls, from the two settings above. */
export function providerConcurrency(c: { EXECUTION_PROVIDER_CONCURRENCY: number; EXECUTION_PROVIDER_CONCURRENCY_OVERRIDES: string }): { default: number; overrides: Record<string, number> } {
  const pairs = c.EXECUTION_PROVIDER_CONCURRENCY_OVERRIDES.split(',').map((p) => p.trim()).filter(Boolean).map((p) => p.split('=').map((x) => x.trim()) as [string, string]);
  return { default: c.EXECUTION_PROVIDER_CONCURRENCY, overrides: Object.fromEntries(pairs.map(([id, n]) => [id, Math.max(1, Number(n))])) };
}
