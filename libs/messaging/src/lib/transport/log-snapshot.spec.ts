import { isVisible, parseSnapshot, snapshotFromLegacy } from './log-snapshot';

describe('event log positions as snapshots', () => {
  it('parses the text form, with and without running transactions', () => {
    expect(parseSnapshot('10:15:10,12')).toMatchObject({ xmin: 10n, xmax: 15n, xip: [10n, 12n] });
    expect(parseSnapshot('7:7:')).toMatchObject({ xmin: 7n, xmax: 7n, xip: [] });
    expect(() => parseSnapshot('7:x:')).toThrow(/not a pg_snapshot/);
  });

  it('sees what had ended, not what was running or had not started — a long transaction hides only itself', () => {
    const s = parseSnapshot('10:15:10,12');
    expect([9n, 10n, 11n, 12n, 13n, 14n, 15n].map((t) => isVisible(t, s))).toEqual([true, false, true, false, true, true, false]);
  });

  it('maps a saved (txid, id) position: a finished transaction is covered, a cut one is read again', () => {
    const max = 9223372036854775807n;
    expect(isVisible(41n, snapshotFromLegacy(41n, max, max))).toBe(true);
    expect(isVisible(41n, snapshotFromLegacy(41n, 5n, max))).toBe(false);
    expect(isVisible(40n, snapshotFromLegacy(41n, 5n, max))).toBe(true);
  });
});
