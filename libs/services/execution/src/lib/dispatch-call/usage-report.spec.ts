/** A metered call's usage report, read from the provider's result (G5.3): provider output is data, checked for shape. */
import { usageReportOf } from './usage-report';

const price = { unit: '100_chars', unitPriceMinor: '100' };
const report = (usage: unknown) => usageReportOf({ _meta: usage === undefined ? {} : { 'tollgate/usage': usage } }, price);

describe('usageReportOf', () => {
  it('reads whole units of the price\'s unit, as a number or a string, the unit optional', () => {
    expect(report({ unit: '100_chars', units: 12 })).toEqual({ unit: '100_chars', units: '12' });
    expect(report({ units: '0' })).toEqual({ unit: '100_chars', units: '0' });
    expect(report({ units: ' 7 ' })).toEqual({ unit: '100_chars', units: '7' });
  });

  it.each([
    [undefined, 'missing'], [null, 'missing'], ['12', 'malformed'], [[12], 'malformed'], [{ units: 1.5 }, 'malformed'], [{ units: '1e3' }, 'malformed'],
    [{ units: 'lots' }, 'malformed'], [{}, 'malformed'], [{ units: '9999999999999999' }, 'malformed'], [{ units: -3 }, 'negative'], [{ units: '-1' }, 'negative'],
    [{ unit: 'tokens', units: 3 }, 'wrong_unit'],
  ])('%j is %s', (usage, problem) => {
    expect(report(usage)).toEqual({ problem });
  });

  it('a result without _meta reports nothing', () => {
    expect(usageReportOf({}, price)).toEqual({ problem: 'missing' });
  });

  it('reads an x402 Settlement-Overrides amount when the result has no report: whole units, rounded down', () => {
    const withHeader = (header: string, meta: Record<string, unknown> = {}) => usageReportOf({ _meta: meta }, price, header);
    expect(withHeader('{"amount":"1250"}')).toEqual({ unit: '100_chars', units: '12' });
    expect(withHeader('{"amount":"0"}')).toEqual({ unit: '100_chars', units: '0' });
    // The provider's _meta report wins over the header.
    expect(withHeader('{"amount":"1250"}', { 'tollgate/usage': { units: 3 } })).toEqual({ unit: '100_chars', units: '3' });
    for (const bad of ['{"amount":"50%"}', '{"amount":"$0.05"}', '{"amount":-5}', '{"amount":"-5"}', 'nope', '{}', 'null', '{"amount":"99999999999999999"}']) {
      expect(withHeader(bad)).toEqual({ problem: 'malformed' });
    }
  });
});
