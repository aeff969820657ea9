import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { parsePolicy, type Policy, toolDecision } from '@tollgate/policy';
import { type PolicyEvaluator, WorkerEvaluator } from '@tollgate/policy-tools';
import { IdentityCache } from '../authenticate/identity-cache.service';
import { GATEWAY, GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { AccessPolicies, type PolicySubject } from './access-policies.repository';

export { type PolicySubject } from './access-policies.repository';

/** A policy in force for a caller: whose it is and which version. */
export interface PolicyInForce {
  subject: PolicySubject;
  version: number;
  text: string;
  policy: Policy;
}

/** The versions in force, as recorded on CallRequested and the call row. */
export type PinnedPolicyVersions = { ownerPolicyVersion?: number; urlPolicyVersion?: number };

export type AccessDecision =
  | { ok: true; pinned: PinnedPolicyVersions }
  | { ok: false; code: 'TOOL_NOT_ALLOWED'; rule: string; subject: PolicySubject; version: number; message: string }
  | { ok: false; code: 'TOOL_ARGUMENTS_INVALID'; subject: PolicySubject; version: number; violations: { constraint: string; suggestion: string }[]; suggestedFix: unknown };

/**
 * The access policy: the same engine as the self-verification tools
 * decides, before any payment or dispatch, whether a caller may call a tool
 * with these arguments. Owner and URL policies both apply. Tool filtering is
 * plain string matching done inline; argument schemas are evaluated in a
 * worker thread with a deadline, because a policy's `pattern` can be slow.
 */
@Injectable()
export class AccessPolicyService implements OnModuleDestroy {
  private readonly parsed = new Map<string, Policy>();
  private readonly evaluator: PolicyEvaluator = new WorkerEvaluator();

  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    @Inject(GATEWAY_OPTIONS) private readonly options: GatewayOptions,
    private readonly cache: IdentityCache,
  ) {}

  async onModuleDestroy(): Promise<void> {
    await this.evaluator.close();
  }

  /**
   * The policies in force for this owner and URL (latest version of each) — a per-call pre-check, answered from memory
   * within the identity cache's staleness bound; a new version clears every replica's copy at once (NOTIFY).
   */
  async inForce(ownerId: string, mcpUrlId: string): Promise<PolicyInForce[]> {
    const rows = (await this.cache.get(`policies:${ownerId}:${mcpUrlId}`, () => AccessPolicies.latest(this.dataSource, ownerId, mcpUrlId)))!;
    return rows.map((r) => ({ subject: r.subject_kind, version: r.version, text: r.text, policy: this.parse(`${r.subject_kind}:${ownerId}:${mcpUrlId}:${r.version}`, r.text) }));
  }

  /** Whether the tool's name passes every policy's tools.allow / tools.deny (listing and search hide the rest). */
  toolAllowed(policies: readonly PolicyInForce[], tool: string): boolean {
    return policies.every((p) => !toolDecision(p.policy, tool));
  }

  async decide(policies: readonly PolicyInForce[], tool: string, args: Record<string, unknown>): Promise<AccessDecision> {
    const pinned: PinnedPolicyVersions = {};
    for (const p of policies) {
      if (p.subject === 'owner') pinned.ownerPolicyVersion = p.version;
      else pinned.urlPolicyVersion = p.version;
      const refused = toolDecision(p.policy, tool);
      if (refused) return { ok: false, code: 'TOOL_NOT_ALLOWED', rule: refused.constraint, subject: p.subject, version: p.version, message: refused.suggestion };
      const res = await this.evaluator.evaluate({ kind: 'check_args', policyText: p.text, tool, arguments: args }, this.options.policyTimeoutMs);
      if (res === 'timeout' || !res.ok) {
        // Fail closed: a policy that cannot be evaluated in time allows nothing.
        return { ok: false, code: 'TOOL_NOT_ALLOWED', rule: res === 'timeout' ? 'evaluation timed out' : 'policy could not be evaluated', subject: p.subject, version: p.version, message: 'The access policy could not be evaluated; the call is refused.' };
      }
      const v = res.value as { allowed: boolean; violations: { constraint: string; suggestion: string }[]; suggested_fix: unknown };
      if (!v.allowed) {
        const rule = v.violations[0]?.constraint ?? 'policy';
        if (rule.startsWith('schemas.')) return { ok: false, code: 'TOOL_ARGUMENTS_INVALID', subject: p.subject, version: p.version, violations: v.violations, suggestedFix: v.suggested_fix };
        return { ok: false, code: 'TOOL_NOT_ALLOWED', rule, subject: p.subject, version: p.version, message: v.violations[0]?.suggestion ?? 'Refused by the access policy.' };
      }
    }
    return { ok: true, pinned };
  }

  /** Stores a new version for an owner or URL; the text must be a valid policy (it is parsed and its schemas compiled). */
  async put(subject: PolicySubject, subjectId: string, text: string): Promise<{ version: number; warnings: string[] }> {
    const res = await this.evaluator.evaluate({ kind: 'check_args', policyText: text, tool: '__validate__', arguments: {} }, this.options.policyTimeoutMs);
    if (res === 'timeout') throw new PolicyRejected('the policy could not be checked in time');
    if (!res.ok) throw new PolicyRejected(res.message);
    const version = await AccessPolicies.add(this.dataSource, subject, subjectId, text);
    await this.cache.changed(this.dataSource);
    return { version, warnings: parsePolicy(text).warnings };
  }

  private parse(key: string, text: string): Policy {
    let p = this.parsed.get(key);
    if (!p) {
      p = parsePolicy(text);
      if (this.parsed.size > 1000) this.parsed.clear();
      this.parsed.set(key, p);
    }
    return p;
  }
}

export class PolicyRejected extends Error {}
