/**
 * x402 servers' `Settlement-Overrides` response header (`{"amount": "1000" | "50%" | "$0.05"}`), which an upstream
 * answering over HTTP may send with a tool call's result to say what it used. Captured here per call — keyed by the
 * intent the request's `_meta["tollgate/intentId"]` names — and taken by execution with the result; it is never
 * passed on to the agent.
 */
export const SETTLEMENT_OVERRIDES_HEADER = 'settlement-overrides';
/** At most this many captured headers wait to be taken (a call that failed never takes its own). */
const MAX_WAITING = 10_000;
const waiting = new Map<string, string>();

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** A fetch that remembers the header of a `tools/call` response (parsing the request only when the header came). */
export function fetchCapturingSettlementOverrides(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const res = await base(url, init);
    const raw = res.headers.get(SETTLEMENT_OVERRIDES_HEADER);
    const intentId = raw && typeof init?.body === 'string' ? intentOf(init.body) : undefined;
    if (raw && intentId) {
      if (waiting.size >= MAX_WAITING) waiting.delete(waiting.keys().next().value!);
      waiting.set(intentId, raw.slice(0, 1_000));
    }
    return res;
  };
}

/** The header the provider sent with this call's result, once (undefined: none). */
export function takeSettlementOverrides(intentId: string): string | undefined {
  const raw = waiting.get(intentId);
  waiting.delete(intentId);
  return raw;
}

function intentOf(body: string): string | undefined {
  try {
    const m = JSON.parse(body) as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
    const id = m.method === 'tools/call' ? m.params?._meta?.['tollgate/intentId'] : undefined;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
