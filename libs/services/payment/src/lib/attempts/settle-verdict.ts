import { type ChainVerdict } from '../x402/chain-state';
import { type SettleOutcome } from '../x402/x402.types';

/** What to do with an x402 attempt once the chain was asked (after a settle, or before asking for one again). */
export type SettleStep =
  /** The money moved to us in `transaction`: credit exactly the authorization's value, once. */
  | { kind: 'credit'; transaction: string }
  /** Nothing moved and nothing can move for us any more: refuse; give the nonce back only if the chain never used it. */
  | { kind: 'refuse'; reason: string; releaseNonce: boolean }
  /** The nonce is unused and the authorization still valid: ask the facilitator to settle (again, same identifier). */
  | { kind: 'settle' }
  /** No verdict yet: nothing credited, nothing refused; asked again later and shown to ops as unknown. */
  | { kind: 'unknown'; problem: string };

/** A facilitator's words for "this authorization's nonce is already used" (x402's code, ours, and the loose kind). */
export function saysNonceUsed(reason: string): boolean {
  return /nonce.*(used|spent)|(used|spent).*nonce/i.test(reason);
}

/**
 * The verdict on an x402 payment comes from the chain, never from the facilitator's word (trust, round three):
 * - transferred: credit; used by something else (a cancellation): refuse, the nonce stays spent;
 * - unreadable: unknown;
 * - unused and expired (the chain's time is past `validBefore`): it can never move, refuse;
 * - unused and valid: only a facilitator's stated refusal of a first settle refuses (it never sent a transfer); after
 *   an unknown outcome (or a claim of "nonce used" or "settled" the chain does not show yet) the transfer may still be
 *   pending, so it is asked again; before any settle (`settle` undefined) the facilitator is asked.
 */
export function settleStep(chain: ChainVerdict, o: { settle?: SettleOutcome; validBefore: bigint; afterUnknown: boolean }): SettleStep {
  if (chain.kind === 'transferred') return { kind: 'credit', transaction: chain.transaction };
  if (chain.kind === 'used-otherwise') return { kind: 'refuse', reason: 'authorization_cancelled', releaseNonce: false };
  if (chain.kind === 'unreadable') return { kind: 'unknown', problem: chain.problem };
  if (o.validBefore <= chain.chainTime) return { kind: 'refuse', reason: 'authorization_expired', releaseNonce: true };
  const s = o.settle;
  if (!s) return { kind: 'settle' };
  if (s.kind === 'refused' && !saysNonceUsed(s.reason) && !o.afterUnknown) return { kind: 'refuse', reason: s.reason, releaseNonce: true };
  if (s.kind === 'unknown') return { kind: 'unknown', problem: `settle: ${s.problem}` };
  const said = s.kind === 'settled' ? `settled in ${s.response.transaction}` : `refused (${s.reason})`;
  return { kind: 'unknown', problem: `settle: the facilitator ${said}, but the chain shows the nonce unused` };
}
