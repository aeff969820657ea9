import type * as MppxCore from 'mppx' with { 'resolution-mode': 'import' };
import { MPP_CREDENTIAL_META_KEY } from '../call-tool/payment-meta';

/** Where MPP's `requiresAuth` puts the credential on HTTP, so `Authorization` stays the OAuth bearer. */
export const PAYMENT_AUTHORIZATION_HEADER = 'payment-authorization';

/**
 * MPP over HTTP: a tools/call whose credential came in the `Payment-Authorization` header (`Payment <base64url>`,
 * parsed by mppx) gets it in `params._meta["org.paymentauth/credential"]`, the MCP binding's place, unless the
 * request put one there itself. A header that is not a credential is kept as the unusable value it is, so the call
 * is refused with a clear error rather than run unpaid.
 */
export function moveCredentialToMeta(body: unknown, header: string | string[] | undefined): void {
  const request = body as { method?: unknown; params?: { _meta?: Record<string, unknown> } } | null;
  if (typeof header !== 'string' || request?.method !== 'tools/call' || typeof request.params !== 'object' || request.params === null) return;
  const meta = (request.params._meta ??= {});
  if (meta[MPP_CREDENTIAL_META_KEY] !== undefined) return;
  try {
    // mppx ships ES modules only: loaded when a header first needs it (jest's runtime cannot load it at import).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    meta[MPP_CREDENTIAL_META_KEY] = (require('mppx') as typeof MppxCore).Credential.deserialize(header);
  } catch {
    meta[MPP_CREDENTIAL_META_KEY] = 'not a Payment credential';
  }
}
