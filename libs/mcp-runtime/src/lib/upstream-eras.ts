import { type Client, type PriorDiscovery } from '@modelcontextprotocol/client';

/** A legacy verdict is asked again after this long: a provider that upgraded to 2026-07-28 is found within it. */
export const LEGACY_VERDICT_MS = 10 * 60_000;

/**
 * Which protocol era each upstream speaks, remembered per endpoint or stdio command so the
 * `server/discover` probe is paid once, not on every connection. Modern first: an upstream never seen is probed
 * (`mode: 'auto'`), and one that does not answer the probe is reached with the 2025 handshake. The probe and the
 * handshake carry no tool call, so falling back never performs anything twice. A modern verdict is kept until a
 * connection with it fails (the key is then forgotten); a legacy one is dated and retired after LEGACY_VERDICT_MS.
 */
export class UpstreamEras {
  private readonly verdicts = new Map<string, { verdict: PriorDiscovery; storedAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The verdict to connect with, if one is fresh. */
  prior(key: string): PriorDiscovery | undefined {
    const entry = this.verdicts.get(key);
    if (!entry) return undefined;
    if (entry.verdict.kind === 'legacy' && this.now() - entry.storedAt > LEGACY_VERDICT_MS) {
      this.verdicts.delete(key);
      return undefined;
    }
    return entry.verdict;
  }

  /** Records what a connected client found (a DiscoverResult means 2026-07-28; none means the 2025 handshake). */
  learn(key: string, client: Client): void {
    const discover = client.getDiscoverResult();
    this.verdicts.set(key, { verdict: discover ? { kind: 'modern', discover } : { kind: 'legacy' }, storedAt: this.now() });
  }

  forget(key: string): void {
    this.verdicts.delete(key);
  }

  /** The era last seen for `key`, for logs and tests. */
  eraOf(key: string): 'modern' | 'legacy' | undefined {
    return this.verdicts.get(key)?.verdict.kind;
  }
}
