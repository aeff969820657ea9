import fc from 'fast-check';
import { type AgentSpendPolicy, decideSpend, periodEnd, periodStart, type SpendFigures, type VelocityRules } from './spend-policy';

const rules: VelocityRules = { maxCallsPerMinute: 100, maxSpendPerMinuteMinor: 1_000_000n, maxRepeats: 5, repeatWindowMs: 10_000 };
const open: AgentSpendPolicy = { paused: false, period: 'day' };
const now = new Date('2026-12-02T10:00:30Z');
const figures = (f: Partial<SpendFigures> = {}): SpendFigures => ({
  price: 1000n, asset: 'USDC', debtMinor: 0n, spentInPeriodMinor: 0n, periodEndsAt: periodEnd('day', now), callsLastMinute: 0,
  spentLastMinuteMinor: 0n, sameRequestInWindow: 0, approved: false, freeCallsUsedToday: 0, dayEndsAt: periodEnd('day', now), now, ...f,
});

describe('spend policy (payment and policy codes)', () => {
  it('lets an ordinary paid call through', () => {
    expect(decideSpend(open, rules, figures())).toEqual({ ok: true, free: false });
  });

  it('refuses with each code, first refusal wins', () => {
    expect(decideSpend({ ...open, paused: true }, rules, figures({ debtMinor: 1n }))).toMatchObject({ ok: false, code: 'PAYMENT_DEBT_OUTSTANDING', retryable: false });
    expect(decideSpend({ ...open, paused: true }, rules, figures())).toMatchObject({ ok: false, code: 'MCP_POLICY_AGENT_PAUSED', retryable: false });
    expect(decideSpend(open, rules, figures({ callsLastMinute: 100 }))).toMatchObject({ code: 'MCP_VELOCITY_LIMIT_EXCEEDED', details: { rule: 'call_rate' }, retryAfterMs: 30_000 });
    expect(decideSpend(open, rules, figures({ spentLastMinuteMinor: 999_500n }))).toMatchObject({ code: 'MCP_VELOCITY_LIMIT_EXCEEDED', details: { rule: 'spend_rate' } });
    expect(decideSpend(open, rules, figures({ sameRequestInWindow: 5 }))).toMatchObject({ code: 'MCP_VELOCITY_LIMIT_EXCEEDED', details: { rule: 'repeat' }, retryAfterMs: 10_000 });
    expect(decideSpend({ ...open, spendLimitMinor: 1500n }, rules, figures({ spentInPeriodMinor: 1000n }))).toMatchObject({
      code: 'MCP_SPEND_LIMIT_EXCEEDED', retryable: false, details: { limit: { amountMinor: '1500', asset: 'USDC' }, spent: { amountMinor: '1000' }, resetsAt: '2026-12-03T00:00:00.000Z' },
    });
    expect(decideSpend({ ...open, approvalThresholdMinor: 999n }, rules, figures())).toMatchObject({ code: 'MCP_APPROVAL_REQUIRED', retryable: true });
    expect(decideSpend({ ...open, approvalThresholdMinor: 999n }, rules, figures({ approved: true }))).toEqual({ ok: true, free: false });
    expect(decideSpend(open, rules, figures({ price: 0n, freeCallsPerDay: 3, freeCallsUsedToday: 3 }))).toMatchObject({
      code: 'MCP_QUOTA_EXCEEDED', retryable: true, retryAfterMs: 14 * 3600_000 - 30_000, details: { freeCallsPerDay: 3, resetsAt: '2026-12-03T00:00:00.000Z' },
    });
    expect(decideSpend(open, rules, figures({ price: 0n, freeCallsPerDay: 3, freeCallsUsedToday: 2 }))).toEqual({ ok: true, free: true });
  });

  it('a free call within the quota costs nothing and is not held against the spend limit', () => {
    expect(decideSpend({ ...open, spendLimitMinor: 0n }, rules, figures({ freeCallsPerDay: 1, freeCallsUsedToday: 0 }))).toEqual({ ok: true, free: true });
  });

  it('property: a spend limit is never passed by a call it lets through', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10_000n }), fc.bigInt({ min: 0n, max: 10_000n }), fc.bigInt({ min: 0n, max: 10_000n }), (limit, spent, price) => {
      const v = decideSpend({ ...open, spendLimitMinor: limit }, rules, figures({ price, spentInPeriodMinor: spent }));
      if (v.ok && price > 0n) expect(spent + price <= limit).toBe(true);
      if (!v.ok) expect(v.code).toBe('MCP_SPEND_LIMIT_EXCEEDED');
    }));
  });

  it('property: periods contain now and follow one another', () => {
    fc.assert(fc.property(fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }), fc.constantFrom('day', 'week', 'month' as const), (d, p) => {
      const s = periodStart(p, d);
      const e = periodEnd(p, d);
      expect(s.getTime() <= d.getTime() && d.getTime() < e.getTime()).toBe(true);
      expect(periodStart(p, e).getTime()).toBe(e.getTime());
      if (p === 'week') expect(s.getUTCDay()).toBe(1);
    }));
  });
});
