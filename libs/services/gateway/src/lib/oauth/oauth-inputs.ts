import * as z from 'zod/v4';
import { OAuthClientMetadataSchema, type OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * The bounds of every OAuth parameter the gateway stores or echoes (RFC 9700 asks an authorization server to bound
 * what it keeps): a client's metadata (registered or fetched) is a small document, a URL fits a browser's address bar.
 */
export const OAUTH_LIMITS = {
  /** A whole client metadata document or registration, serialised. */
  metadataBytes: 5 * 1024,
  url: 2048,
  redirectUris: 10,
  clientName: 200,
  state: 1024,
  scope: 200,
} as const;

/** An S256 code challenge: the base64url SHA-256 of the verifier, always 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Where a client may be sent back (RFC 8252, OAuth 2.1): https, or http on a loopback address (a native app's
 * local listener). Never a fragment, never credentials in the URL. Undefined: allowed; otherwise why not.
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > OAUTH_LIMITS.url || !URL.canParse(uri)) return 'is not a URL';
  const u = new URL(uri);
  if (u.hash || u.username || u.password) return 'must not carry a fragment or credentials';
  if (u.protocol === 'https:') return undefined;
  if (u.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(u.hostname)) return undefined;
  return 'must be https, or http on a loopback address';
}

/** One readable sentence naming the first field a schema refused — never the validator's own JSON. */
export function firstProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  const field = issue?.path.join('.') || 'request';
  return `${field} is missing or invalid${issue?.code === 'too_big' ? ' (too long)' : ''}.`;
}

/** A client's metadata, registered or fetched: the SDK's schema, then the gateway's bounds and redirect rule. */
export function checkClientMetadata(raw: unknown): { ok: true; metadata: OAuthClientMetadata } | { ok: false; problem: string } {
  if (Buffer.byteLength(JSON.stringify(raw ?? null)) > OAUTH_LIMITS.metadataBytes) return { ok: false, problem: `The client metadata is over ${OAUTH_LIMITS.metadataBytes} bytes.` };
  const parsed = OAuthClientMetadataSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, problem: firstProblem(parsed.error) };
  const m = parsed.data;
  if (m.redirect_uris.length === 0 || m.redirect_uris.length > OAUTH_LIMITS.redirectUris) return { ok: false, problem: `redirect_uris must list 1 to ${OAUTH_LIMITS.redirectUris} URIs.` };
  for (const uri of m.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) return { ok: false, problem: `redirect_uris: ${uri.slice(0, 100)} ${problem}.` };
  }
  if ((m.client_name?.length ?? 0) > OAUTH_LIMITS.clientName) return { ok: false, problem: `client_name is over ${OAUTH_LIMITS.clientName} characters.` };
  return { ok: true, metadata: m };
}

/** The parameters that must hold before an error may be sent to the client's redirect URI. */
export const ClientParams = z.object({
  client_id: z.string().min(1).max(OAUTH_LIMITS.url),
  redirect_uri: z.string().max(OAUTH_LIMITS.url).optional(),
});

/** The rest of an authorization request (OAuth 2.1 with PKCE S256 and a resource indicator). */
export const RequestParams = z.object({
  response_type: z.literal('code'),
  code_challenge: z.string().regex(S256_CHALLENGE),
  code_challenge_method: z.literal('S256'),
  scope: z.string().max(OAUTH_LIMITS.scope).optional(),
  state: z.string().max(OAUTH_LIMITS.state).optional(),
  resource: z.string().max(OAUTH_LIMITS.url).refine((v) => URL.canParse(v)).optional(),
});
