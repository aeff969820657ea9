import { ProtocolError } from '@modelcontextprotocol/server';
import { MPP_CREDENTIAL_META_KEY, MPP_PAYMENT_REQUIRED_META_KEY } from '../call-tool/payment-meta';

/** MPP's MCP binding: the JSON-RPC error of a credential that failed verification (mppx's `Mcp.paymentVerificationFailedCode`). */
export const MPP_VERIFICATION_FAILED = -32043;

type Result = { _meta?: Record<string, unknown> };

/**
 * A request that carried an MPP credential and was refused by MPP's verification is answered as the binding says:
 * JSON-RPC error -32043 whose data is the payment-required data (`httpStatus`, a fresh challenge) — mppx's MCP client
 * pays it again — with the gateway's error (`assay/error`: code, reason) beside it. Every other refusal, and any
 * request without a credential, stays the tool result G7 defines (which carries MPP's challenge in its `_meta` too).
 */
export function mppVerificationFailedOf(result: Result, meta: Record<string, unknown> | undefined): ProtocolError | undefined {
  if (meta?.[MPP_CREDENTIAL_META_KEY] === undefined) return undefined;
  const required = result._meta?.[MPP_PAYMENT_REQUIRED_META_KEY] as Record<string, unknown> | undefined;
  const error = result._meta?.['assay/error'] as { code?: string; message?: string; details?: Record<string, unknown> } | undefined;
  if (!required || error?.code !== 'PAYMENT_REQUIRED' || error.details?.['rail'] !== 'mpp') return undefined;
  return new ProtocolError(MPP_VERIFICATION_FAILED, error.message ?? 'The MPP credential was refused.', { ...required, 'assay/error': error });
}
