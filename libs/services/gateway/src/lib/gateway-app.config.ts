import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { CommonConfig, type ConfigBase, EnvVar } from '@tollgate/config';
import { parseOutboundPolicy } from '@tollgate/http';

/** The deadline each call is given, shared by the gateway app's config and the embedded host's. */
export function WithCallDeadlineConfig<B extends ConfigBase>(Base: B) {
  class CallDeadlineConfig extends Base {
    @EnvVar({ description: 'Deadline (ms) given to each call; the upstream runtime caps one operation at 30 s.' })
    @IsInt() @Min(100) @Max(30_000)
    GATEWAY_CALL_DEADLINE_MS = 30_000;
  }
  return CallDeadlineConfig;
}

/** The OAuth sign-in's settings, shared by the gateway app's config and the embedded host's. */
export function WithOAuthConfig<B extends ConfigBase>(Base: B) {
  class OAuthConfig extends Base {
    @EnvVar({ description: 'The gateway\'s public base URL (scheme and host, no path), the OAuth issuer and the origin of every MCP URL\'s resource. Unset: the URL each request reached the gateway by (fine on loopback; set it in deployment).', type: 'string', example: 'https://gateway.example.com' })
    @IsOptional() @Matches(/^https?:\/\/[^/?#\s]+$/, { message: 'must be a scheme and host, without a path' })
    GATEWAY_PUBLIC_URL?: string;

    @EnvVar({ description: 'Networks (comma-separated CIDRs or addresses) the gateway may fetch from when a caller names the URL (OAuth client ID metadata documents), besides public unicast addresses. Empty: public addresses only — never loopback, private, link-local or internal ones.', example: '' })
    @Matches(/^[0-9A-Fa-f.:/,\s]*$/, { message: 'must be a comma-separated list of addresses or CIDRs' })
    GATEWAY_OUTBOUND_ALLOWED_NETWORKS = '';

    @EnvVar({ description: 'Ports (comma-separated, or * for any) the gateway may fetch from when a caller names the URL.' })
    @Matches(/^(\*|\d{1,5}(\s*,\s*\d{1,5})*)$/, { message: 'must be * or a comma-separated list of ports' })
    GATEWAY_OUTBOUND_ALLOWED_PORTS = '443';

    @EnvVar({ description: 'Lifetime (s) of an OAuth access token.' })
    @IsInt() @Min(60) @Max(86_400)
    GATEWAY_OAUTH_ACCESS_TTL_S = 3600;

    @EnvVar({ description: 'Lifetime (s) of an OAuth refresh token (rotated on every use).' })
    @IsInt() @Min(3600) @Max(31_536_000)
    GATEWAY_OAUTH_REFRESH_TTL_S = 2_592_000;
  }
  return OAuthConfig;
}

/** The OAuth options of the gateway module; an http client ID metadata document is accepted only on loopback (a developer's machine). */
export function oauthOptions(c: { GATEWAY_PUBLIC_URL?: string; GATEWAY_OAUTH_ACCESS_TTL_S: number; GATEWAY_OAUTH_REFRESH_TTL_S: number; GATEWAY_OUTBOUND_ALLOWED_NETWORKS: string; GATEWAY_OUTBOUND_ALLOWED_PORTS: string }, bindHost: string) {
  return {
    accessTtlS: c.GATEWAY_OAUTH_ACCESS_TTL_S, refreshTtlS: c.GATEWAY_OAUTH_REFRESH_TTL_S, ...(c.GATEWAY_PUBLIC_URL ? { publicUrl: c.GATEWAY_PUBLIC_URL } : {}),
    loopbackHttpClientIds: ['127.0.0.1', '::1', 'localhost'].includes(bindHost),
    outbound: parseOutboundPolicy(c.GATEWAY_OUTBOUND_ALLOWED_NETWORKS, c.GATEWAY_OUTBOUND_ALLOWED_PORTS),
  };
}

/** Every variable the gateway app reads, validated at boot. */
export class GatewayAppConfig extends WithOAuthConfig(WithCallDeadlineConfig(CommonConfig)) {
  @EnvVar({ description: 'HTTP port of the gateway app.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3000;

  @EnvVar({ description: 'Bearer token for the gateway admin API (at least 16 characters).', secret: true, type: 'string' })
  @IsString() @MinLength(16)
  GATEWAY_ADMIN_TOKEN!: string;

  @EnvVar({ description: 'How long (ms) call_tool waits for an outcome before answering that the call is still running.' })
  @IsInt() @Min(100) @Max(120_000)
  GATEWAY_CALL_WAIT_MS = 35_000;

  @EnvVar({ description: 'Fallback (ms): how often a waiting call_tool request re-reads its call. Any replica recording the outcome wakes it at once through NOTIFY; this only covers a lost listener.' })
  @IsInt() @Min(100) @Max(600_000)
  GATEWAY_CALL_RECHECK_MS = 2000;

  @EnvVar({ description: 'Secret that signs search_tools cursors (at least 32 characters); all gateway instances share it. Defaults to one derived from GATEWAY_ADMIN_TOKEN.', secret: true, type: 'string' })
  @IsOptional() @IsString() @MinLength(32)
  GATEWAY_CURSOR_SECRET?: string;

  @EnvVar({ description: 'How often (ms) each instance reloads its in-memory catalog as a safety net besides PostgreSQL LISTEN/NOTIFY.' })
  @IsInt() @Min(1000) @Max(3_600_000)
  GATEWAY_CATALOG_POLL_MS = 30_000;

  @EnvVar({ description: 'Time limit (ms) of one access-policy or policy-tool evaluation; past it the call is refused (E_TIMEOUT for the tools).' })
  @IsInt() @Min(10) @Max(60_000)
  GATEWAY_POLICY_TIMEOUT_MS = 2000;

  @EnvVar({ description: 'Folder of per-owner policy folders (<root>/<ownerId>/...) read by assay_check_args, assay_check_sequence and assay_policy_decide; unset turns those tools off.', type: 'string' })
  @IsOptional() @IsString() @MinLength(1)
  GATEWAY_POLICY_ROOT?: string;

  @EnvVar({ description: 'How long (ms) a device sign-in of the local bridge stays open for the owner\'s approval.' })
  @IsInt() @Min(1000) @Max(3_600_000)
  GATEWAY_SIGNIN_TTL_MS = 600_000;

  @EnvVar({ description: 'Proxies trusted to state the client address in X-Forwarded-For (comma-separated addresses, CIDRs, or loopback / linklocal / uniquelocal); empty: none, the socket peer is the client. Used for the failed-authentication limit.', example: '' })
  @Matches(/^[0-9A-Za-z.:/,\s]*$/, { message: 'must be a comma-separated list of addresses, CIDRs or loopback/linklocal/uniquelocal' })
  GATEWAY_TRUSTED_PROXIES = '';

  @EnvVar({ description: 'Hostnames (comma-separated; no scheme or port, IPv6 in brackets) allowed in the Host and Origin headers of the MCP and sign-in routes (DNS-rebinding protection). Empty: localhost-class names when bound to loopback; otherwise Host is not checked and a browser Origin of another site than the Host is refused.', example: 'gateway.example.com' })
  @Matches(/^[0-9A-Za-z.:[\]\-,\s]*$/, { message: 'must be a comma-separated list of hostnames' })
  GATEWAY_ALLOWED_HOSTS = '';

  @EnvVar({ description: 'How search_tools ranks: hybrid (meaning and words; words only while the model is unavailable), lexical, or dense (evaluation baseline).' })
  @IsIn(['hybrid', 'lexical', 'dense'])
  GATEWAY_SEARCH_RANKING: 'hybrid' | 'lexical' | 'dense' = 'hybrid';

  @EnvVar({ description: 'Folder holding the sentence-embedding model and its tokenizer (infra/models/model.sh fetch, run by npm ci, puts them there).' })
  @IsString()
  GATEWAY_SEARCH_MODEL_DIR = 'infra/models/.data/all-minilm-l6-v2-q';
}

/** The routes a browser page could be made to call, guarded against DNS rebinding (`browserGuard` in @tollgate/http). */
export function gatewayBrowserGuard(allowedHosts: string): { paths: string[]; allowedHosts: string[] } {
  return { paths: ['/mcp', '/signin', '/oauth', '/authorize'], allowedHosts: allowedHosts.split(',').map((h) => h.trim()).filter(Boolean) };
}
