/**
 * Bearer tokens the platform presents to providers, by origin (scheme, host
 * and port). They are configured in the services that connect upstream
 * (discovery to list tools, execution to call them) and never travel on the
 * event bus, in the catalog or in the database — the way a container runtime
 * keeps registry credentials per registry host.
 *
 * Text form (env `UPSTREAM_CREDENTIALS`): `origin=token` pairs separated by
 * commas, e.g. `http://127.0.0.1:3100=s3cret-token-of-16+`.
 */
export type UpstreamCredentials = ReadonlyMap<string, string>;

/** `origin=token[,origin=token…]`: an origin is http(s)://host[:port] with no path; a token is 16+ URL-safe characters. */
export const UPSTREAM_CREDENTIALS_PATTERN = /^(https?:\/\/[^\s,=/]+=[A-Za-z0-9._~+-]{16,}(,https?:\/\/[^\s,=/]+=[A-Za-z0-9._~+-]{16,})*)?$/;

export const UPSTREAM_CREDENTIALS_DESCRIPTION =
  'Bearer tokens presented to providers, by origin: origin=token[,origin=token...] (e.g. the sample providers\' SAMPLE_PROVIDERS_TOKEN); empty: none.';

export function parseUpstreamCredentials(text: string): UpstreamCredentials {
  const map = new Map<string, string>();
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = pair.lastIndexOf('=');
    map.set(new URL(pair.slice(0, at)).origin, pair.slice(at + 1));
  }
  return map;
}

const known = new Map<string, string>();

/** Adds the credentials a service was configured with (one process may host several services: embedded mode). */
export function useUpstreamCredentials(credentials: UpstreamCredentials | undefined): void {
  for (const [origin, token] of credentials ?? []) known.set(origin, token);
}

/** The headers for a request to `endpoint`: `Authorization` when a token is configured for its origin. */
export function upstreamHeaders(endpoint: string | URL): Record<string, string> {
  const token = known.get(new URL(endpoint).origin);
  return token ? { Authorization: `Bearer ${token}` } : {};
}
