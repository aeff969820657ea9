/**
 * The reconciliation of metered calls, from the ledger's own record of their facts — written apart from the call-life
 * model, so a fault in the model's charge rule shows here: for every settled metered call, the charge settled must be
 * min(max(units × unit price, minimum), hold) (min(minimum, hold) when no usable usage was reported), and the hold must
 * be resolved exactly once (one CallSettled or CallRefunded, one HoldReleased).
 */
export interface CallFacts {
  intentId: string;
  events: { type: string; payload: Record<string, unknown> }[];
}

export interface MeteredProblem {
  intentId: string;
  problem: string;
}

type Price = { unitPriceMinor: string; minimumMinor?: string };
type Usage = { units?: string; problem?: string };

const payloadOf = (c: CallFacts, type: string) => c.events.find((e) => e.type === type)?.payload;
const count = (c: CallFacts, ...types: string[]) => new Set(c.events.filter((e) => types.includes(e.type)).map((e) => JSON.stringify(e.payload))).size;

/** What the charge must be, from the hold, the price and the reported usage. */
function owed(hold: bigint, price: Price, usage: Usage | undefined): bigint {
  const minimum = BigInt(price.minimumMinor ?? '0');
  const used = usage?.units !== undefined && !usage.problem ? BigInt(usage.units) * BigInt(price.unitPriceMinor) : 0n;
  const atLeast = used > minimum ? used : minimum;
  return atLeast > hold ? hold : atLeast;
}

/** One metered call's problems (none when it reconciles). */
function checkCall(c: CallFacts): string[] {
  const held = payloadOf(c, 'PaymentHeld') as { amount?: { amountMinor: string }; metered?: Price } | undefined;
  const settled = payloadOf(c, 'CallSettled') as { amount: { amountMinor: string } } | undefined;
  const price = ((payloadOf(c, 'CallRequested') as { metered?: Price } | undefined)?.metered ?? held?.metered);
  const problems: string[] = [];
  if (!held) return problems; // nothing was held: nothing to resolve
  if (count(c, 'CallSettled', 'CallRefunded') !== 1) problems.push(`the hold ended ${count(c, 'CallSettled', 'CallRefunded')} times`);
  if (count(c, 'HoldReleased') > 1) problems.push(`the hold was released ${count(c, 'HoldReleased')} times`);
  if (!settled || !held.amount || !price) return problems;
  // The usage confirmed with the effect is the charge's basis (a reconciled effect carries none: the minimum).
  const confirmed = payloadOf(c, 'EffectConfirmed') as { usage?: Usage } | undefined;
  const hold = BigInt(held.amount.amountMinor);
  const charged = BigInt(settled.amount.amountMinor);
  const expected = owed(hold, price, confirmed?.usage);
  if (charged !== expected) problems.push(`charged ${charged}, the rule gives ${expected} (hold ${hold})`);
  if (charged > hold) problems.push(`charged ${charged}, more than the hold ${hold}`);
  return problems;
}

/** Every metered call checked; the ones that do not reconcile, with why. */
export function checkMeteredCalls(calls: readonly CallFacts[]): { checked: number; problems: MeteredProblem[] } {
  const problems = calls.flatMap((c) => checkCall(c).map((problem) => ({ intentId: c.intentId, problem })));
  return { checked: calls.length, problems };
}
