import { POLICY_LIMITS } from '@tollgate/policy';

/** P4's application-level error codes. */
export type PolicyErrorCode = 'E_POLICY_NOT_FOUND' | 'E_POLICY_READ' | 'E_PERMISSION_DENIED' | 'E_POLICY_PARSE' | 'E_INTERNAL' | 'E_TIMEOUT';

/** Fixed, value-free messages of the outer dispatch failures (P4). */
export const FIXED_MESSAGES = { E_INTERNAL: 'Tool execution failed', E_TIMEOUT: 'Tool execution timed out' } as const;

export class PolicyToolError extends Error {
  constructor(
    readonly code: PolicyErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PolicyToolError';
  }
}

export interface PolicyToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * P4: `isError: true`, and the first text content is exactly
 * `{"allowed":false,"error":{"code":…,"message":…}}` with a bounded message.
 * E_INTERNAL and E_TIMEOUT always carry their fixed message, whatever caused them.
 */
export function errorResult(code: PolicyErrorCode, message: string): PolicyToolResult {
  const text = code === 'E_INTERNAL' || code === 'E_TIMEOUT' ? FIXED_MESSAGES[code] : message;
  const bounded = text.length > POLICY_LIMITS.maxMessageChars ? `${text.slice(0, POLICY_LIMITS.maxMessageChars - 1)}…` : text;
  return { content: [{ type: 'text', text: JSON.stringify({ allowed: false, error: { code, message: bounded } }) }], isError: true };
}

export function okResult(value: Record<string, unknown>): PolicyToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}
