import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';

// How a failed upstream call is told apart: whether the request may have reached the provider's tool decides
// between falling back, rejecting and reconciling an unknown outcome (execution's call policy).

/**
 * `refused`: the request never reached the provider's tool (connection refused, 502/503/504): safe to send elsewhere.
 * `scope`: the call had no complete trusted scope (R1) and was never sent.
 * `not_sent`: the tool call never left this process — the deadline had passed before it could be sent, or no session
 * to the provider could be opened: the platform knows nothing was performed.
 * `capability`: the provider refused before its tool ran, needing a client capability the gateway never offers
 * upstream (2026-07-28 -32021, e.g. sampling): nothing was performed; `requiredCapabilities` says which.
 * `deadline` and `connection`: the request may have reached the provider; the outcome is unknown.
 */
export type UpstreamFailureKind = 'deadline' | 'connection' | 'protocol' | 'limit' | 'refused' | 'scope' | 'not_sent' | 'capability';

/** A failure talking to an upstream MCP server; `kind` tells whether the request may have reached it. */
export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
    /** With `capability`: the client capabilities the provider requires, in its own words (provider data). */
    readonly requiredCapabilities?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}


/** What a failed upstream operation means for the call: its kind, from the SDK's error and the abort signal. */
export function classify(error: unknown, signal: AbortSignal): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (error instanceof ProtocolError && error.code === ProtocolErrorCode.MissingRequiredClientCapability) {
    const capabilities = knownCapabilities((error.data as { requiredCapabilities?: unknown } | undefined)?.requiredCapabilities);
    return new UpstreamError('capability', `the provider needs client capabilities the gateway does not offer (${Object.keys(capabilities).join(', ') || 'unnamed'})`, capabilities);
  }
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  if (signal.aborted || /abort|timed? ?out/i.test(text)) return new UpstreamError('deadline', 'the upstream did not answer before the deadline');
  // The SDK's HTTP errors carry the status (SdkHttpError.status).
  const status = (error as { status?: unknown }).status;
  const cause = error instanceof Error && error.cause instanceof Error ? `${error.cause.message} ${String((error.cause as NodeJS.ErrnoException).code ?? '')}` : '';
  // Never reached the tool: the connection was refused, or the endpoint answered 502/503/504 (StreamableHTTPError carries the status).
  if (status === 502 || status === 503 || status === 504 || /ECONNREFUSED/.test(`${text} ${cause}`)) {
    return new UpstreamError('refused', 'the provider refused the connection or is unavailable');
  }
  if (/ECONNREFUSED|ECONNRESET|ENOENT|socket|fetch failed|network|EPIPE|closed/i.test(text)) return new UpstreamError('connection', 'the connection to the upstream failed');
  return new UpstreamError('protocol', 'the upstream answered with a protocol error');
}

/** The client capability each kind of input request needs (2026-07-28 `input_required`). */
const CAPABILITY_OF_INPUT: Record<string, string> = { 'elicitation/create': 'elicitation', 'sampling/createMessage': 'sampling', 'roots/list': 'roots' };

/**
 * A provider's `input_required` answer, which the gateway never relays (R4: interaction requests fail): nothing was
 * performed (a round is stateless), and it is the same refusal as -32021 — the capabilities its input requests need.
 */
export function inputRequiredFailure(result: { inputRequests?: unknown }): UpstreamError {
  const requests = result.inputRequests && typeof result.inputRequests === 'object' ? Object.values(result.inputRequests as Record<string, unknown>) : [];
  const needed = Object.fromEntries(requests.slice(0, 32).map((r) => CAPABILITY_OF_INPUT[String((r as { method?: unknown } | null)?.method)]).filter(Boolean).map((c) => [c, {}]));
  const capabilities = knownCapabilities(needed);
  return new UpstreamError('capability', `the provider asked for input the gateway does not relay (${Object.keys(capabilities).join(', ') || 'unnamed'})`, capabilities);
}

/** The client capabilities MCP defines; a provider's other names are not repeated to agents. */
const CLIENT_CAPABILITIES = new Set(['roots', 'sampling', 'elicitation', 'tasks', 'experimental', 'extensions']);
const MAX_CAPABILITY_JSON = 1024;

/**
 * What a provider says it requires, bounded before it travels in an event and reaches an agent (provider output is
 * data): only MCP's capability names, each with its detail when that is a small object, else `{}`.
 */
export function knownCapabilities(required: unknown): Record<string, Record<string, unknown>> {
  if (!required || typeof required !== 'object' || Array.isArray(required)) return {};
  const kept = Object.entries(required as Record<string, unknown>).filter(([name]) => CLIENT_CAPABILITIES.has(name));
  return Object.fromEntries(kept.map(([name, detail]) => {
    const small = detail && typeof detail === 'object' && !Array.isArray(detail) && JSON.stringify(detail).length <= MAX_CAPABILITY_JSON;
    return [name, small ? (detail as Record<string, unknown>) : {}];
  }));
}
