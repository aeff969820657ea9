import { execFileSync } from 'node:child_process';

/**
 * Drops every packet to and from a local TCP port with a packet filter (iptables, as root), without closing anything:
 * connections through it go half-open, as after a network failure — unlike a stopped server, which resets them.
 * Only the drill's own port is touched. `restore` removes the rules; the connections resume where TCP left them.
 */
export function dropPackets(port: number): { restore(): void } {
  const rules = [['--dport', String(port)], ['--sport', String(port)]].map(([flag, p]) =>
    ['INPUT', '-p', 'tcp', flag!, p!, '-m', 'comment', '--comment', `tollgate-drill-${port}`, '-j', 'DROP']);
  try {
    for (const rule of rules) execFileSync('iptables', ['-I', ...rule], { stdio: 'pipe' });
  } catch (error) {
    throw new Error(`the packet-drop drill needs iptables and root (CI installs Debian's iptables): ${(error as Error).message}`);
  }
  return {
    restore() {
      for (const rule of rules) execFileSync('iptables', ['-D', ...rule], { stdio: 'pipe' });
    },
  };
}
