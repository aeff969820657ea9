/**
 * The error codes an agent can see (REQUIREMENTS G8, source 000) and the
 * shared error shape (G7): `isError: true`, readable text, and
 * `_meta["assay/error"]` with `code`, `retryable` and, as the cause warrants,
 * `message`, `retryAfterMs`, `intentId`, `details`.
 */
export const AGENT_ERROR_CODES = [
  'MCP_URL_NOT_FOUND', 'MCP_CREDENTIAL_INVALID', 'MCP_AUTH_RATE_LIMITED', 'TOOL_NOT_IN_TOOLSET', 'TOOL_NOT_ALLOWED',
  'TOOL_REMOVED', 'CONTRACT_VERSION_RETIRED', 'UNSUPPORTED_INPUT_FIELD', 'NO_PROVIDER_MATCHES_RULES', 'TOOL_NO_ELIGIBLE_BINDING',
  'TOOL_ALL_BINDINGS_FAILED', 'TOOL_ARGUMENTS_INVALID', 'INVALID_CURSOR', 'RATE_LIMITED', 'PAYMENT_REQUIRED',
  'PAYMENT_DEBT_OUTSTANDING', 'PAYMENT_INSUFFICIENT_FUNDS', 'PAYMENT_NO_SETTLEABLE_CHAIN', 'MCP_QUOTA_EXCEEDED',
  'MCP_SPEND_LIMIT_EXCEEDED', 'MCP_POLICY_AGENT_PAUSED', 'MCP_APPROVAL_REQUIRED', 'MCP_VELOCITY_LIMIT_EXCEEDED',
  'PROVIDER_REQUEST_ERROR', 'PROVIDER_SYSTEM_ERROR', 'PROVIDER_CONTRACT_VIOLATION', 'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_IN_PROGRESS', 'IDEMPOTENCY_ATTEMPT_STALLED', 'IDEMPOTENCY_RESULT_UNAVAILABLE', 'MCP_IDEMPOTENCY_KEY_INVALID',
  'INTERNAL_SERVER_ERROR',
  // Added with the tasks extension: the agent cancelled the call before it was sent; nothing was
  // performed and the hold is released.
  'CALL_CANCELLED',
] as const;
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];

export interface AgentError {
  code: AgentErrorCode;
  retryable: boolean;
  message?: string;
  retryAfterMs?: number;
  /** Seconds to wait, where the spec names `retryAfter` (IDEMPOTENCY_IN_PROGRESS). */
  retryAfter?: number;
  intentId?: string;
  details?: Record<string, unknown>;
}

export function isAgentErrorCode(code: string): code is AgentErrorCode {
  return (AGENT_ERROR_CODES as readonly string[]).includes(code);
}

/** A tool result carrying the shared error shape. */
export function agentErrorResult(error: AgentError): {
  isError: true;
  content: { type: 'text'; text: string }[];
  _meta: Record<string, unknown>;
} {
  return {
    isError: true,
    content: [{ type: 'text', text: `${error.code}: ${error.message ?? 'The call was refused.'}` }],
    _meta: { 'assay/error': error },
  };
}
