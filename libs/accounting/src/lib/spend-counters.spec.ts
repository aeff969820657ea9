import fc from 'fast-check';
import { minuteStart, slidingMinute } from './spend-counters';

/** Velocity from two minute buckets instead of a scan of every charge. */
describe('sliding minute from two buckets', () => {
  it('is the current bucket plus the still-covered share of the previous one, within both bounds', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.integer({ min: 0, max: 4_000_000_000_000 }), (cur, prev, t) => {
      const v = slidingMinute(cur, prev, new Date(t));
      expect(v).toBeGreaterThanOrEqual(cur);
      expect(v).toBeLessThanOrEqual(cur + prev);
    }), { numRuns: 1000 });
  });

  it('counts all of the previous minute at its end and none of it a minute later', () => {
    const start = minuteStart(new Date('2026-12-03T10:00:42.123Z'));
    expect(start.toISOString()).toBe('2026-12-03T10:00:00.000Z');
    expect(slidingMinute(3n, 10n, start)).toBe(13n);
    expect(slidingMinute(3n, 10n, new Date(start.getTime() + 30_000))).toBe(8n);
    expect(slidingMinute(3n, 10n, new Date(start.getTime() + 59_999))).toBe(3n);
  });
});
