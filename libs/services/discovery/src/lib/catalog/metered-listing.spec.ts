/** Metered listings are validated like every listing field: a clear error naming the field (G3, G5.3). */
import { checkMetered } from './metered-listing';

describe('checkMetered', () => {
  const good = { unit: '100_chars', unitPriceMinor: '100', minimumMinor: '500', maximumMinor: '50000' };

  it('takes a well-formed metered price', () => {
    expect(checkMetered(good)).toEqual({ ok: true, metered: good });
    expect(checkMetered({ unit: 'row', unitPriceMinor: '0', maximumMinor: '1' })).toEqual({ ok: true, metered: { unit: 'row', unitPriceMinor: '0', maximumMinor: '1' } });
  });

  it.each([
    [{ ...good, unit: 'Tokens!' }, 'metered.unit must be'],
    [{ ...good, unitPriceMinor: '-1' }, 'metered.unitPriceMinor must be a whole, non-negative'],
    [{ ...good, unitPriceMinor: '1.5' }, 'metered.unitPriceMinor must be a whole, non-negative'],
    [{ ...good, unitPriceMinor: 100 }, 'metered.unitPriceMinor must be a whole, non-negative'],
    [{ ...good, minimumMinor: '0.1' }, 'metered.minimumMinor must be a whole, non-negative'],
    [{ ...good, maximumMinor: '0' }, 'metered.maximumMinor must be a whole, positive'],
    [{ ...good, maximumMinor: '1000000000000000000' }, 'metered.maximumMinor must be a whole, positive'],
    [{ ...good, minimumMinor: '60000' }, 'metered.minimumMinor must not exceed metered.maximumMinor'],
    ['per token', 'metered must be an object'],
  ])('refuses %j, naming the field', (raw, problem) => {
    const checked = checkMetered(raw);
    expect(checked.ok).toBe(false);
    expect(checked.ok ? '' : checked.problem).toContain(problem);
  });
});
