/** The start of the next fixed UTC minute, for `retryAfterMs`. */
export function msUntilNextUtcMinute(now: number): number {
  return 60_000 - (now % 60_000);
}
