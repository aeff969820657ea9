import { periodStart } from './spend-policy';
/**
 * Spend and velocity are counted, not scanned: each hold adds to a few counters (per agent: spend per
 * day / week / month and asset, calls and spend per UTC minute and asset, free calls per day and tool), so deciding a
 * call costs the same on the first call of the day and on the millionth.
 */
export type CounterKind = 'day' | 'week' | 'month' | 'minute' | 'free';

export interface CounterKey {
  kind: CounterKind;
  /** Start of the bucket (UTC). */
  bucket: Date;
  /** The asset (spend, velocity) or the tool (free calls). */
  key: string;
}

/** Start of the UTC minute that holds `now`. */
export function minuteStart(now: Date): Date {
  return new Date(Math.floor(now.getTime() / 60_000) * 60_000);
}

/**
 * "In the last minute" from two fixed one-minute buckets: all of the current one and the part of the previous one the
 * sliding minute still covers (the estimate rate limiters use). Never more than the two buckets hold, never less than
 * the current one.
 */
export function slidingMinute(current: bigint, previous: bigint, now: Date): bigint {
  const into = BigInt(now.getTime() % 60_000);
  return current + (previous * (60_000n - into)) / 60_000n;
}

/** The spend buckets a hold placed at `at` counts `amount` in: spend per day, week and month, and the minute's velocity. */
export function spendBuckets(asset: string, amount: bigint, at: Date): (CounterKey & { amount: bigint })[] {
  return [
    { kind: 'day', bucket: periodStart('day', at), key: asset, amount }, { kind: 'week', bucket: periodStart('week', at), key: asset, amount },
    { kind: 'month', bucket: periodStart('month', at), key: asset, amount }, { kind: 'minute', bucket: minuteStart(at), key: asset, amount },
  ];
}
