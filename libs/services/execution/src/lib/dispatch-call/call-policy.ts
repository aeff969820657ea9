import { type UpstreamFailureKind } from '@tollgate/mcp-runtime';

/** R6: a result larger than this is refused (and never travels as an event). */
export const MAX_RESULT_BYTES = 2_500_000;

/**
 * C7: execution is the one layer that retries, and only by falling back to the
 * next binding when the failure left no effect behind: the request never
 * reached the provider, or the tool only reads. Anything else is an unknown
 * outcome, reconciled by operation key, never sent again.
 */
export function mayFallBack(failure: UpstreamFailureKind, kind: 'read' | 'write'): boolean {
  // Nothing reached the provider's tool: another binding may serve it, and the last one failing is a plain failure, not
  // an unknown. A provider that refused for want of a client capability (-32021) ran nothing either.
  if (failure === 'refused' || failure === 'scope' || failure === 'not_sent' || failure === 'capability') return true;
  return kind === 'read' && failure !== 'deadline';
}

/** Which bindings a call may use, in order: healthy ones first, by provider id; none when all are unhealthy. */
export function eligibleBindings<B extends { providerId: string; health?: string }>(bindings: readonly B[]): B[] {
  return bindings.filter((b) => b.health !== 'unhealthy').sort((a, b) => (a.providerId < b.providerId ? -1 : a.providerId > b.providerId ? 1 : 0));
}

export interface ReadBackSpec {
  tool: string;
  keyArgument: string;
  compare: string[];
}

/**
 * C4: `succeeded` is not `verified`. The resource read back by operation key
 * must carry the requested values; returns the differences (empty: verified).
 */
export function compareReadBack(spec: ReadBackSpec, request: Record<string, unknown>, resource: Record<string, unknown> | undefined): Record<string, { requested: unknown; found: unknown }> {
  const diff: Record<string, { requested: unknown; found: unknown }> = {};
  for (const field of spec.compare) {
    const requested = request[field];
    const found = resource?.[field];
    if (JSON.stringify(requested) !== JSON.stringify(found)) diff[field] = { requested, found };
  }
  return diff;
}
