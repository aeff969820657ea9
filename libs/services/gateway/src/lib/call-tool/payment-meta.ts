import { agentErrorResult } from '@tollgate/contracts';

/** x402 (G7): a signed payment in the request's `_meta`, beside the operation key, never in the tool arguments. */
export const X402_PAYMENT_META_KEY = 'x402/payment';
/** MPP's MCP binding: the credential in `params._meta` (mppx's `Mcp.credentialMetaKey`). */
export const MPP_CREDENTIAL_META_KEY = 'org.paymentauth/credential';
/** MPP's payment-required data on a tool result, which mppx's MCP client pays (`Mcp.paymentRequiredMetaKey`). */
export const MPP_PAYMENT_REQUIRED_META_KEY = 'org.paymentauth/payment-required';
/** MPP's receipt on a paid result (`Mcp.receiptMetaKey`). */
export const MPP_RECEIPT_META_KEY = 'org.paymentauth/receipt';

/** The payments a call carries, checked for shape (payment verifies them), or the refusal of a malformed one. */
export type CallPayments = { ok: true; x402Payment?: Record<string, unknown>; mppCredential?: Record<string, unknown> } | { ok: false; refusal: ReturnType<typeof agentErrorResult> };

export function paymentsOf(meta: Record<string, unknown>): CallPayments {
  const x402Payment = meta[X402_PAYMENT_META_KEY];
  if (x402Payment !== undefined && !isSmallObject(x402Payment)) {
    return refused(`_meta["${X402_PAYMENT_META_KEY}"] must be an x402 payment payload object. Sign the payment requirement and send it there.`);
  }
  const mppCredential = meta[MPP_CREDENTIAL_META_KEY];
  const challenge = (mppCredential as { challenge?: unknown } | undefined)?.challenge;
  if (mppCredential !== undefined && (!isSmallObject(mppCredential) || !isSmallObject(challenge))) {
    return refused(`_meta["${MPP_CREDENTIAL_META_KEY}"] must be an MPP credential (a challenge and its payload). Pay the challenge and send the credential there.`);
  }
  return {
    ok: true, ...(x402Payment !== undefined ? { x402Payment: x402Payment as Record<string, unknown> } : {}),
    ...(mppCredential !== undefined ? { mppCredential: mppCredential as Record<string, unknown> } : {}),
  };
}

function isSmallObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && JSON.stringify(v).length <= 16_384;
}

function refused(message: string): CallPayments {
  return { ok: false, refusal: agentErrorResult({ code: 'PAYMENT_REQUIRED', retryable: true, message }) };
}
