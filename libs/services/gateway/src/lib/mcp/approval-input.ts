import { CLIENT_CAPABILITIES_META_KEY, inputRequired, inputResponse, type InputRequiredResult } from '@modelcontextprotocol/server';

type ToolResult = { [k: string]: unknown; content: unknown[]; isError?: boolean; _meta?: Record<string, unknown> };
type ApprovalError = { code?: string; details?: { approvalId?: string; price?: { amountMinor?: string; asset?: string } } };

/** The key of the approval prompt in `inputRequests` / `inputResponses` (one per approval). */
export const approvalInputKey = (approvalId: string) => `approval:${approvalId}`;

/** Whether the 2026-07-28 request's client declared form elicitation (`elicitation: {}` counts as form, as the revision says). */
function canElicitForm(meta: Record<string, unknown>): boolean {
  const capabilities = meta[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: { form?: unknown; url?: unknown } } | undefined;
  const elicitation = capabilities?.elicitation;
  return !!elicitation && (elicitation.form !== undefined || elicitation.url === undefined);
}

/**
 * A call waiting for its owner's approval (MCP_APPROVAL_REQUIRED) is answered to a 2026-07-28
 * client that can show a form as `input_required` — a prompt to confirm once the owner approved — instead of a
 * refusal the model has to interpret. The client retries the same request (same operation key) with the answer; the
 * gateway runs it again, and payment, which owns the approval, decides: approved → the call proceeds, once; still
 * pending → the prompt again. A declined prompt gets the refusal itself. Nothing is held or charged by the prompt:
 * the approval was recorded before it, and a retry under the same key is the same purchase.
 */
export function approvalAsInput(result: ToolResult, meta: Record<string, unknown>, responses: Record<string, unknown> | undefined): ToolResult | InputRequiredResult {
  const error = result._meta?.['assay/error'] as ApprovalError | undefined;
  const approvalId = error?.details?.approvalId;
  if (error?.code !== 'MCP_APPROVAL_REQUIRED' || typeof approvalId !== 'string' || !canElicitForm(meta)) return result;
  const key = approvalInputKey(approvalId);
  const answered = inputResponse(responses, key);
  if (answered.kind === 'elicit' && answered.action !== 'accept') return result;
  const price = error.details?.price;
  return inputRequired({
    inputRequests: {
      [key]: inputRequired.elicit({
        message: `This call needs its owner's approval${price?.amountMinor ? ` (${price.amountMinor} minor units of ${price.asset ?? 'the asset'})` : ''}: `
          + `approval ${approvalId}. Ask the owner to approve it, then confirm here to run the call (it is charged once).`,
        requestedSchema: { type: 'object', properties: { approved: { type: 'boolean', title: 'The owner approved this call' } }, required: ['approved'] },
      }),
    },
  });
}
