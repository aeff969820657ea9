import { failureOf, isConfirmed, receiptOf } from '@tollgate/call-life';
import { agentErrorResult, type AgentErrorCode, displayAmount, isAgentErrorCode } from '@tollgate/contracts';
import { type StoredCall } from '../calls/calls.repository';
import { MPP_PAYMENT_REQUIRED_META_KEY, MPP_RECEIPT_META_KEY } from './payment-meta';

export interface ToolCallResult {
  [key: string]: unknown;
  content: Record<string, unknown>[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** The agent's answer, as the model decides it: the confirmed result with its receipt, or the failure. */
export function answerOf(call: StoredCall): ToolCallResult {
  const life = call.life;
  const receipt = receiptFor(call);
  const x402 = paidWith(call);
  const failure = failureOf(life);
  if (!isConfirmed(life) && failure) {
    const { code: rawCode, message, retryable, retryAfterMs, details, x402PaymentRequired, mppPaymentRequired } = failure;
    const code: AgentErrorCode = isAgentErrorCode(rawCode) ? rawCode : 'INTERNAL_SERVER_ERROR';
    const failed = agentErrorResult({
      code, retryable, message, intentId: call.intent_id, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}), ...(details ? { details } : {}),
    });
    // A payment refusal held nothing: there is no receipt, and the x402 requirement (if any) rides beside the error.
    if (failure.stage === 'payment') {
      return {
        ...failed, _meta: {
          ...failed._meta, ...(x402PaymentRequired ? { 'x402/paymentRequired': x402PaymentRequired } : {}),
          ...(mppPaymentRequired ? { [MPP_PAYMENT_REQUIRED_META_KEY]: mppPaymentRequired } : {}),
        },
      };
    }
    return { ...failed, _meta: { ...failed._meta, 'assay/receipt': receipt, ...x402 } };
  }
  const result = call.result ?? { content: [] };
  return {
    content: result.content,
    ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}),
    ...(result.isError ? { isError: true } : {}),
    _meta: { 'assay/receipt': receipt, ...x402 },
  };
}

/** How the hold was paid from outside, as the agent's rail tells it back: x402's settle response, MPP's receipt. */
function paidWith(call: StoredCall): Record<string, unknown> {
  const held = call.life.held;
  if (!held || call.answer_expired_at !== null) return {};
  return {
    ...(held.x402PaymentResponse ? { 'x402/payment-response': held.x402PaymentResponse } : {}),
    ...(held.mppReceipt ? { [MPP_RECEIPT_META_KEY]: held.mppReceipt } : {}),
  };
}

/** G5.3: VERIFYING while the hold is held, then SETTLED (charged) or REFUNDED (nothing charged). A replay shows the current status. */
function receiptFor(call: StoredCall): Record<string, unknown> {
  const r = receiptOf(call.life);
  const amount = (minor: bigint) => ({ asset: call.asset, amountMinor: minor.toString(), display: displayAmount(minor, call.asset, call.asset_decimals ?? 0) });
  return {
    intentId: call.intent_id, status: r.status, toolId: call.tool_id, providerId: r.providerId ?? null, classification: r.classification ?? null,
    attempts: r.attempts, ...(r.fellBack ? { fellBack: true } : {}), held: amount(r.heldMinor), charged: amount(r.chargedMinor),
    // A metered call: the price it was charged by and the units the provider reported (the charge follows once settled).
    ...(r.usage ? { usage: { unit: r.usage.unit, units: r.usage.units ?? null, unitPrice: amount(BigInt(r.usage.unitPriceMinor)), ...(r.usage.minimumMinor ? { minimum: amount(BigInt(r.usage.minimumMinor)) } : {}) } } : {}),
  };
}

/**
 * The answer while a fact that could answer the call is parked (the gateway could not record it): the outcome exists
 * but cannot be read yet. Final for this wait; nothing was charged twice, and the same key gives the verdict after ops
 * re-drive the fact.
 */
export function outcomeHeld(intentId: string): ToolCallResult {
  return agentErrorResult({
    code: 'IDEMPOTENCY_ATTEMPT_STALLED', retryable: false, intentId,
    message: 'The outcome of this call could not be recorded and is held for review; nothing was charged twice. Do not buy it again under a new key; retry this key later for the verdict.',
  });
}
