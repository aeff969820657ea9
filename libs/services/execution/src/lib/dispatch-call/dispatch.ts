import { type ToolBindingDto, type UnknownOutcomeReason, type UpstreamResultDto } from '@tollgate/contracts';
import { type MeteredPrice, type UsageReport } from '@tollgate/call-life';
import { type CallEmission } from '@tollgate/messaging';
import { callUpstreamTool, type TrustedActor, UpstreamError, type UpstreamTarget } from '@tollgate/mcp-runtime';
import { type ReadBackSpec } from './call-policy';
import { type ResultVerdict } from './check-result';

// What a dispatch carries, who it acts for, where it goes, and how a write's effect is read back by operation key.

/** The part of the R1 scope that is the same for every binding of a call (the server is the binding's provider). */
export interface CallAuthority {
  actor: TrustedActor;
  workspaceId: string;
  toolsetId: string;
}

/** From the pending call's columns: the owner is the tenant and its workspace, the agent the user, the MCP URL the toolset. */
export function callAuthority(row: { owner_id: string | null; agent_id: string | null; mcp_url_id: string | null }): CallAuthority {
  return { actor: { tenantId: row.owner_id ?? '', userId: row.agent_id ?? '' }, workspaceId: row.owner_id ?? '', toolsetId: row.mcp_url_id ?? '' };
}

export interface Dispatch {
  intentId: string;
  toolId: string;
  /** Eligible bindings in order; attempt n uses bindings[n - 1]. */
  bindings: ToolBindingDto[];
  arguments: Record<string, unknown>;
  /** The agent's key, or the intentId: every call reaches the provider with an operation key (C2: from run control). */
  operationKey: string;
  deadlineAt: Date;
  outputSchema: Record<string, unknown> | null;
  kind: 'read' | 'write';
  readBack: ReadBackSpec | null;
  authority: CallAuthority;
  /** The agent asked for the provider's progress: it is asked for and relayed as CallProgressed. */
  progress: boolean;
  /** Priced by use: the provider's usage report is read from its result. */
  metered?: MeteredPrice;
}

export type ReadBackOutcome = { status: 'found'; resource: Record<string, unknown>; result: UpstreamResultDto } | { status: 'missing' } | { status: 'unreachable'; detail: string };

/** A read-back gets its own short budget: the call's deadline may already be spent. */
const READ_BACK_MS = 10_000;

/** Where a binding's provider is reached: from discovery's registry, never from the agent (R1). */
export function upstreamTarget(b: ToolBindingDto): UpstreamTarget {
  return b.transport === 'stdio' ? { transport: 'stdio', command: b.command!, args: b.args ?? [] } : { transport: 'http', endpoint: b.endpoint! };
}

export function toResult(r: { content?: unknown; structuredContent?: unknown; isError?: boolean }): UpstreamResultDto {
  return {
    content: (r.content ?? []) as Record<string, unknown>[],
    ...(r.structuredContent ? { structuredContent: r.structuredContent as Record<string, unknown> } : {}),
    ...(r.isError ? { isError: true } : {}),
  } as UpstreamResultDto;
}

/** Reads a write's resource back through the declared read-back tool, by operation key. */
export async function readBackResource(d: Pick<Dispatch, 'intentId' | 'operationKey' | 'readBack' | 'authority'>, binding: ToolBindingDto): Promise<ReadBackOutcome> {
  const spec = d.readBack!;
  try {
    const raw = await callUpstreamTool({
      target: upstreamTarget(binding), scope: { ...d.authority, serverName: binding.providerId }, toolName: spec.tool, arguments: { [spec.keyArgument]: d.operationKey },
      deadlineAt: Date.now() + READ_BACK_MS, intentId: d.intentId, operationKey: d.operationKey,
    });
    if (raw.isError) return { status: 'missing' };
    const resource = raw.structuredContent as Record<string, unknown> | undefined;
    if (!resource) return { status: 'unreachable', detail: 'the read-back returned no structured resource' };
    return { status: 'found', resource, result: toResult(raw) };
  } catch (e) {
    return { status: 'unreachable', detail: e instanceof UpstreamError ? e.message : 'the read-back failed' };
  }
}

/** CallDispatched of attempt n: the binding it goes to (bindings[n - 1]). */
export function dispatchedOf(d: Dispatch, attempt: number): CallEmission {
  const binding = d.bindings[attempt - 1]!;
  return {
    type: 'CallDispatched',
    payload: {
      intentId: d.intentId, attempt, providerId: binding.providerId, bindingId: binding.bindingId,
      upstreamToolName: binding.upstreamToolName, deadlineAt: d.deadlineAt.toISOString(), operationKey: d.operationKey,
    },
  };
}

// The commands execution runs after commit and the results they report back (see DispatchWorkflow.decideResult).

/** One attempt of a dispatch: the command the workflow runs after CallDispatched of that attempt committed. */
export interface AttemptCommand {
  dispatch: Dispatch;
  attempt: number;
}

/** What one attempt's I/O found. */
export type AttemptOutcome =
  | { kind: 'withdrawn' }
  /** `requiredCapabilities`: the provider refused for want of client capabilities (-32021) — which ones. */
  | { kind: 'failed'; failure: string; detail: string; requiredCapabilities?: Record<string, unknown> }
  | { kind: 'unknown'; reason: UnknownOutcomeReason; detail: string }
  | { kind: 'too_large'; upstream: UpstreamResultDto; bytes: number; limit: number }
  | { kind: 'received'; upstream: UpstreamResultDto; verdict: ResultVerdict; readBack?: ReadBackOutcome; usage?: UsageReport };

/** Who decided an unknown outcome, when and why (kept on the reconciliation's record). */
export interface Resolution {
  decision: 'happened' | 'did_not_happen';
  by: string;
  at: string;
  why: string;
}

/** A command's result, fed back to the dispatch workflow. */
export type ExecutionResult =
  | ({ type: 'attempt'; intentId: string; outcome: AttemptOutcome } & AttemptCommand)
  /** The stall sweep: the attempt is still in flight long past its deadline (its process died mid-call). */
  | { type: 'stalled'; intentId: string; attempt: number }
  /** A reconciliation's verdict: the read-back by operation key, or an operator's decision. */
  | { type: 'verdict'; intentId: string; attempt: number; resolution: Resolution; readBack?: ReconciledReadBack };

/** A read-back that answered, with what the verdict compares it with. */
export interface ReconciledReadBack {
  outcome: Exclude<ReadBackOutcome, { status: 'unreachable' }>;
  providerId: string;
  dispatch: Pick<Dispatch, 'arguments' | 'readBack'>;
}
