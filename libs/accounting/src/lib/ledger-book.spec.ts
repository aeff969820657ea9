import fc from 'fast-check';
import { money } from './accounts';
import { LedgerBook } from './ledger-book';
import { splitFee } from './postings';

const OWNERS = ['o1', 'o2'];
const PROVIDERS = ['p1', 'p2'];
const ASSETS = ['USDC', 'EUR'];

type Op =
  | { op: 'deposit'; ref: number; owner: string; minor: bigint; asset: string }
  | { op: 'hold'; id: number; owner: string; minor: bigint; asset: string }
  | { op: 'post'; id: number; part: number; provider: string; feeBps: number }
  | { op: 'void'; id: number }
  | { op: 'chargeback'; ref: number }
  | { op: 'payout'; id: number; provider: string; minor: bigint; asset: string };

const minor = fc.bigInt({ min: -5n, max: 5_000n });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('deposit' as const), ref: fc.integer({ min: 0, max: 8 }), owner: fc.constantFrom(...OWNERS), minor, asset: fc.constantFrom(...ASSETS) }),
  fc.record({ op: fc.constant('hold' as const), id: fc.integer({ min: 0, max: 12 }), owner: fc.constantFrom(...OWNERS), minor, asset: fc.constantFrom(...ASSETS) }),
  fc.record({ op: fc.constant('post' as const), id: fc.integer({ min: 0, max: 12 }), part: fc.double({ min: 0, max: 1.2, noNaN: true }), provider: fc.constantFrom(...PROVIDERS), feeBps: fc.integer({ min: 0, max: 10_000 }) }),
  fc.record({ op: fc.constant('void' as const), id: fc.integer({ min: 0, max: 12 }) }),
  fc.record({ op: fc.constant('chargeback' as const), ref: fc.integer({ min: 0, max: 8 }) }),
  fc.record({ op: fc.constant('payout' as const), id: fc.integer({ min: 0, max: 8 }), provider: fc.constantFrom(...PROVIDERS), minor, asset: fc.constantFrom(...ASSETS) }),
);

function snapshot(book: LedgerBook): string {
  const accounts = [
    ...OWNERS.flatMap((ownerId) => [{ kind: 'available' as const, ownerId }, { kind: 'held' as const, ownerId }, { kind: 'debt' as const, ownerId }]),
    ...PROVIDERS.map((providerId) => ({ kind: 'payable' as const, providerId })),
    { kind: 'revenue' as const }, { kind: 'external' as const },
  ];
  return JSON.stringify(accounts.flatMap((a) => ASSETS.map((asset) => book.balance(a, asset).toString())));
}

describe('double-entry accounting (B: money rules)', () => {
  it('splits a fee in integers: floor to the platform, the rest to the provider', () => {
    expect(splitFee(10_000n, 1000)).toEqual({ fee: 1000n, net: 9000n });
    expect(splitFee(9n, 1000)).toEqual({ fee: 0n, net: 9n });
    expect(splitFee(19n, 1000)).toEqual({ fee: 1n, net: 18n });
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10n ** 18n }), fc.integer({ min: 0, max: 10_000 }), (gross, bps) => {
      const { fee, net } = splitFee(gross, bps);
      expect(fee + net).toBe(gross);
      expect(fee * 10_000n <= gross * BigInt(bps)).toBe(true);
      expect((fee + 1n) * 10_000n > gross * BigInt(bps)).toBe(true);
    }));
  });

  it('walks a call through deposit, hold, partial post, payout', () => {
    const book = new LedgerBook();
    expect(book.deposit('bank-1', 'o1', money(10_000n, 'USDC')).ok).toBe(true);
    expect(book.deposit('bank-1', 'o1', money(10_000n, 'USDC'))).toEqual({ ok: false, reason: 'DUPLICATE' });
    expect(book.placeHold('h1', 'o1', money(3_000n, 'USDC')).ok).toBe(true);
    expect(book.placeHold('h2', 'o1', money(8_000n, 'USDC'))).toEqual({ ok: false, reason: 'INSUFFICIENT_FUNDS' });
    expect(book.postHold('h1', money(2_000n, 'USDC'), 'p1', 1000).ok).toBe(true);
    expect(book.voidHold('h1')).toEqual({ ok: false, reason: 'HOLD_ALREADY_RESOLVED' });
    expect(book.balance({ kind: 'available', ownerId: 'o1' }, 'USDC')).toBe(8_000n);
    expect(book.balance({ kind: 'held', ownerId: 'o1' }, 'USDC')).toBe(0n);
    expect(book.balance({ kind: 'payable', providerId: 'p1' }, 'USDC')).toBe(1_800n);
    expect(book.balance({ kind: 'revenue' }, 'USDC')).toBe(200n);
    expect(book.payout('po-1', 'p1', money(1_800n, 'USDC')).ok).toBe(true);
    expect(book.balance({ kind: 'payable', providerId: 'p1' }, 'USDC')).toBe(0n);
    expect(book.totals().get('USDC')).toBe(0n);
  });

  it('releases a hold to a debt incurred meanwhile before the available balance (found by the property below)', () => {
    const book = new LedgerBook();
    book.deposit('r7', 'o2', money(1n, 'USDC'));
    book.placeHold('h3', 'o2', money(1n, 'USDC'));
    expect(book.chargeback('r7').ok).toBe(true);
    expect(book.balance({ kind: 'debt', ownerId: 'o2' }, 'USDC')).toBe(-1n);
    expect(book.voidHold('h3').ok).toBe(true);
    expect(book.balance({ kind: 'debt', ownerId: 'o2' }, 'USDC')).toBe(0n);
    expect(book.balance({ kind: 'available', ownerId: 'o2' }, 'USDC')).toBe(0n);
  });

  it('property: over any sequence, postings balance per asset, available never goes negative, holds resolve once, refusals change nothing', () => {
    fc.assert(fc.property(fc.array(opArb, { maxLength: 80 }), (ops) => {
      const book = new LedgerBook();
      const resolved = new Set<string>();
      for (const o of ops) {
        const before = snapshot(book);
        let out;
        switch (o.op) {
          case 'deposit': out = book.deposit(`r${o.ref}`, o.owner, money(o.minor, o.asset)); break;
          case 'hold': out = book.placeHold(`h${o.id}`, o.owner, money(o.minor, o.asset)); break;
          case 'post': {
            const h = book.hold(`h${o.id}`);
            const captured = h ? BigInt(Math.floor(Number(h.amount.minor) * o.part)) : 1n;
            out = book.postHold(`h${o.id}`, money(captured, h?.amount.asset ?? 'USDC'), o.provider, o.feeBps);
            break;
          }
          case 'void': out = book.voidHold(`h${o.id}`); break;
          case 'chargeback': out = book.chargeback(`r${o.ref}`); break;
          case 'payout': out = book.payout(`po${o.id}`, o.provider, money(o.minor, o.asset)); break;
        }
        if (!out.ok) expect(snapshot(book)).toBe(before);
        if (out.ok && (o.op === 'post' || o.op === 'void')) {
          expect(resolved.has(`h${o.id}`)).toBe(false);
          resolved.add(`h${o.id}`);
        }
        for (const [, total] of book.totals()) expect(total).toBe(0n);
        for (const asset of ASSETS) expect(book.balance({ kind: 'clearing' }, asset)).toBe(0n);
        for (const ownerId of OWNERS) {
          for (const asset of ASSETS) {
            expect(book.balance({ kind: 'available', ownerId }, asset) >= 0n).toBe(true);
            expect(book.balance({ kind: 'held', ownerId }, asset) >= 0n).toBe(true);
            // A debt and an available balance never coexist: deposits repay debt first.
            expect(book.balance({ kind: 'debt', ownerId }, asset) < 0n && book.balance({ kind: 'available', ownerId }, asset) > 0n).toBe(false);
          }
        }
        for (const providerId of PROVIDERS) for (const asset of ASSETS) expect(book.balance({ kind: 'payable', providerId }, asset) >= 0n).toBe(true);
      }
      for (const p of book.journal) {
        const sums = new Map<string, bigint>();
        for (const e of p.entries) sums.set(e.asset, (sums.get(e.asset) ?? 0n) + e.amount);
        for (const [, s] of sums) expect(s).toBe(0n);
      }
    }), { numRuns: 1000 });
  });
});
