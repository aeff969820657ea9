import { createHash } from 'node:crypto';

/**
 * The event archive's chain, pure: each row's hash covers the previous row's hash and the event's
 * canonical text, so changing, removing or reordering any archived event breaks every hash after it, and positions
 * count 1, 2, 3… without a gap.
 */
export const GENESIS = '0'.repeat(64);

export function chainHash(prevHash: string, position: number | bigint, eventText: string): string {
  return createHash('sha256').update(`${prevHash}\n${position}\n${eventText}`, 'utf8').digest('hex');
}

export interface ArchivedRow {
  position: number;
  eventText: string;
  prevHash: string;
  hash: string;
}

export type ChainProblem =
  | { position: number; kind: 'gap'; expected: number }
  | { position: number; kind: 'broken_link' }
  | { position: number; kind: 'hash_mismatch' };

/** Where a verification stands between pages: the last position and hash seen. */
export interface ChainCursor { position: number; hash: string }

export const START: ChainCursor = { position: 0, hash: GENESIS };

/** Checks one page of rows (in position order) after `from`; returns where it ended, or the first problem. */
export function verifyPage(rows: readonly ArchivedRow[], from: ChainCursor): { ok: true; at: ChainCursor } | { ok: false; at: ChainCursor; problem: ChainProblem } {
  let at = from;
  for (const r of rows) {
    if (r.position !== at.position + 1) return { ok: false, at, problem: { position: r.position, kind: 'gap', expected: at.position + 1 } };
    if (r.prevHash !== at.hash) return { ok: false, at, problem: { position: r.position, kind: 'broken_link' } };
    if (chainHash(r.prevHash, r.position, r.eventText) !== r.hash) return { ok: false, at, problem: { position: r.position, kind: 'hash_mismatch' } };
    at = { position: r.position, hash: r.hash };
  }
  return { ok: true, at };
}
