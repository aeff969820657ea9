/**
 * Spend policy: which of an agent's paid calls the payment service
 * refuses before any money moves, and with which code. Pure: the service
 * gathers the figures under a per-agent lock and applies the verdict.
 *
 * Order of the checks, first refusal wins: debt, pause, platform velocity
 * rules, the owner's per-agent spend limit, the owner's approval threshold,
 * then the daily free quota. Balance is checked last, by the database.
 */
export interface AgentSpendPolicy {
  paused: boolean;
  /** Most an agent may spend per period, in minor units of `asset`; absent: no limit. */
  spendLimitMinor?: bigint;
  period: 'day' | 'week' | 'month';
  /** Calls priced above this need the owner's approval; absent: never. */
  approvalThresholdMinor?: bigint;
}

/** Platform-wide rules: raising an owner's limit does not lift them. */
export interface VelocityRules {
  maxCallsPerMinute: number;
  maxSpendPerMinuteMinor: bigint;
  /** The same tool and arguments more than `maxRepeats` times within `repeatWindowMs`. */
  maxRepeats: number;
  repeatWindowMs: number;
}

export interface SpendFigures {
  price: bigint;
  asset: string;
  /** Minor units owed for calls already served (e.g. a payment that did not settle). */
  debtMinor: bigint;
  spentInPeriodMinor: bigint;
  periodEndsAt: Date;
  callsLastMinute: number;
  spentLastMinuteMinor: bigint;
  sameRequestInWindow: number;
  /** The owner approved this very request (same tool, arguments and operation key). */
  approved: boolean;
  /** Daily free calls of this tool; absent: the tool has no free quota. */
  freeCallsPerDay?: number;
  freeCallsUsedToday: number;
  dayEndsAt: Date;
  now: Date;
}

export type SpendRefusalCode =
  | 'PAYMENT_DEBT_OUTSTANDING'
  | 'MCP_POLICY_AGENT_PAUSED'
  | 'MCP_VELOCITY_LIMIT_EXCEEDED'
  | 'MCP_SPEND_LIMIT_EXCEEDED'
  | 'MCP_APPROVAL_REQUIRED'
  | 'MCP_QUOTA_EXCEEDED';

export type SpendVerdict =
  | { ok: true; free: boolean }
  | { ok: false; code: SpendRefusalCode; retryable: boolean; retryAfterMs?: number; message: string; details: Record<string, unknown> };

export function decideSpend(policy: AgentSpendPolicy, rules: VelocityRules, f: SpendFigures): SpendVerdict {
  const amount = (minor: bigint) => ({ amountMinor: minor.toString(), asset: f.asset });
  if (f.debtMinor > 0n) {
    return refuse('PAYMENT_DEBT_OUTSTANDING', false, 'An earlier served call is still unpaid. Settle the debt, then retry.', { debt: amount(f.debtMinor) });
  }
  if (policy.paused) {
    return refuse('MCP_POLICY_AGENT_PAUSED', false, "The agent's owner has paused its spending. Ask the owner to resume it.", {});
  }
  const minuteLeft = 60_000 - (f.now.getTime() % 60_000);
  if (f.callsLastMinute >= rules.maxCallsPerMinute) {
    return refuse('MCP_VELOCITY_LIMIT_EXCEEDED', true, 'Too many calls in the last minute. Wait for the interval to pass; raising a local limit does not help.', { rule: 'call_rate', limit: rules.maxCallsPerMinute }, minuteLeft);
  }
  if (f.price > 0n && f.spentLastMinuteMinor + f.price > rules.maxSpendPerMinuteMinor) {
    return refuse('MCP_VELOCITY_LIMIT_EXCEEDED', true, 'Spending too fast. Wait for the interval to pass; raising a local limit does not help.', { rule: 'spend_rate', limit: amount(rules.maxSpendPerMinuteMinor) }, minuteLeft);
  }
  if (f.sameRequestInWindow >= rules.maxRepeats) {
    return refuse('MCP_VELOCITY_LIMIT_EXCEEDED', true, 'The same request was repeated too fast. Wait before repeating it; raising a local limit does not help.', { rule: 'repeat', limit: rules.maxRepeats, windowMs: rules.repeatWindowMs }, rules.repeatWindowMs);
  }
  const free = f.freeCallsPerDay !== undefined && f.freeCallsUsedToday < f.freeCallsPerDay;
  const price = free ? 0n : f.price;
  if (policy.spendLimitMinor !== undefined && price > 0n && f.spentInPeriodMinor + price > policy.spendLimitMinor) {
    return refuse('MCP_SPEND_LIMIT_EXCEEDED', false, "This call would pass the spend limit the agent's owner set. Ask the owner to check the limit.", {
      limit: amount(policy.spendLimitMinor), spent: amount(f.spentInPeriodMinor), price: amount(price), period: policy.period, resetsAt: f.periodEndsAt.toISOString(),
    });
  }
  if (policy.approvalThresholdMinor !== undefined && price > policy.approvalThresholdMinor && !f.approved) {
    return refuse('MCP_APPROVAL_REQUIRED', true, "This call costs more than the owner's approval threshold. Once the owner approves it, retry with the same operation key.", {
      threshold: amount(policy.approvalThresholdMinor), price: amount(price),
    });
  }
  if (f.freeCallsPerDay !== undefined && !free && f.price === 0n) {
    return refuse('MCP_QUOTA_EXCEEDED', true, "Today's free calls of this tool are used up. Wait for the reset at 00:00 UTC.", {
      freeCallsPerDay: f.freeCallsPerDay, resetsAt: f.dayEndsAt.toISOString(),
    }, f.dayEndsAt.getTime() - f.now.getTime());
  }
  return { ok: true, free };
}

function refuse(code: SpendRefusalCode, retryable: boolean, message: string, details: Record<string, unknown>, retryAfterMs?: number): SpendVerdict {
  return { ok: false, code, retryable, message, details, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}

/** The end of the period that contains `now` (UTC calendar periods; weeks start on Monday). */
export function periodEnd(period: AgentSpendPolicy['period'], now: Date): Date {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  if (period === 'day') return new Date(Date.UTC(y, m, d + 1));
  if (period === 'month') return new Date(Date.UTC(y, m + 1, 1));
  const sinceMonday = (now.getUTCDay() + 6) % 7;
  return new Date(Date.UTC(y, m, d - sinceMonday + 7));
}

/** The start of that period. */
export function periodStart(period: AgentSpendPolicy['period'], now: Date): Date {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  if (period === 'day') return new Date(Date.UTC(y, m, d));
  if (period === 'month') return new Date(Date.UTC(y, m, 1));
  return new Date(Date.UTC(y, m, d - ((now.getUTCDay() + 6) % 7)));
}
