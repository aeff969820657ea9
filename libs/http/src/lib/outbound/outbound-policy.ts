import ipaddr from 'ipaddr.js';

/**
 * Where the platform may connect when a caller it does not trust (an agent, an unauthenticated sign-in) names the
 * destination: public unicast addresses (ipaddr.js's `unicast` range — every private, loopback, link-local,
 * carrier-grade NAT, unique-local, multicast, reserved, 6to4/Teredo/NAT64 and documentation range is something else)
 * on the ports allowed (443 by default), plus whatever networks and ports the operator allows on top.
 */
export interface OutboundPolicy {
  /** Extra networks allowed besides public unicast (operator's choice, e.g. a test's loopback). */
  readonly networks: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];
  /** Ports allowed; 'any' only when the operator says so. */
  readonly ports: ReadonlySet<number> | 'any';
}

export const DEFAULT_OUTBOUND_POLICY: OutboundPolicy = { networks: [], ports: new Set([443]) };

export class OutboundPolicyError extends Error {}

/**
 * The policy from its two settings: networks as comma-separated CIDRs or addresses (`127.0.0.1/32, fd00::/8`), and
 * ports as comma-separated numbers or `*`. Both empty: the default (public unicast, port 443).
 */
export function parseOutboundPolicy(networks: string, ports: string): OutboundPolicy {
  const nets = networks.split(',').map((n) => n.trim()).filter(Boolean).map((n) => {
    try {
      if (n.includes('/')) return ipaddr.parseCIDR(n);
      const a = ipaddr.parse(n);
      return [a, a.kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
    } catch {
      throw new OutboundPolicyError(`"${n}" is not an address or CIDR`);
    }
  });
  const portList = ports.split(',').map((p) => p.trim()).filter(Boolean);
  if (portList.includes('*')) return { networks: nets, ports: 'any' };
  const parsed = portList.map((p) => {
    const n = Number(p);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new OutboundPolicyError(`"${p}" is not a port`);
    return n;
  });
  return { networks: nets, ports: new Set(parsed.length ? parsed : [443]) };
}

/** Why an address is refused (its ipaddr.js range), or undefined when the policy allows it. Every spelling is normalised first. */
export function refusedAddress(policy: OutboundPolicy, address: string): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // `process` turns an IPv4-mapped IPv6 address (::ffff:127.0.0.1) into the IPv4 address it is.
    parsed = ipaddr.process(address.replace(/^\[|\]$/g, ''));
  } catch {
    return 'not an address';
  }
  if (policy.networks.some(([net, bits]) => net.kind() === parsed.kind() && parsed.match(net as never, bits))) return undefined;
  const range = parsed.range();
  return range === 'unicast' ? undefined : range;
}

export function portAllowed(policy: OutboundPolicy, port: number): boolean {
  return policy.ports === 'any' || policy.ports.has(port);
}
