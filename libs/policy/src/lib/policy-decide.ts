import { type Blocklist } from './policy-document';

/** P3: exact-name check against the compatibility root blocklist. */
export function policyDecide(list: Blocklist, tool: string): { allowed: boolean; reason: string; match?: string } {
  return list.blocklist.includes(tool)
    ? { allowed: false, reason: 'the tool is on the policy blocklist', match: tool }
    : { allowed: true, reason: 'the tool is not on the policy blocklist' };
}
