import fc from 'fast-check';
import { csvLine, decodeCursor, encodeCursor, whereOf } from './journal-query';

/** A minimal RFC 4180 reader, to check what csvLine writes reads back the same. */
function parseLine(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let v = '';
      i++;
      for (;;) {
        if (line[i] === '"' && line[i + 1] === '"') { v += '"'; i += 2; } else if (line[i] === '"') { i++; break; } else v += line[i++];
      }
      out.push(v);
      i++;
    } else {
      const end = line.indexOf(',', i);
      out.push(line.slice(i, end === -1 ? line.length : end));
      i = end === -1 ? line.length + 1 : end + 1;
    }
  }
  return out;
}

describe('journal queries', () => {
  it('property: a cursor decodes to the position it encodes; anything else is refused', () => {
    fc.assert(fc.property(fc.date({ noInvalidDate: true }), fc.string(), fc.nat(), (d, postingId, seq) => {
      const p = { occurredAt: d.toISOString(), postingId, seq };
      expect(decodeCursor(encodeCursor(p))).toEqual(p);
    }));
    for (const bad of ['', 'x', Buffer.from('[1,2,3]').toString('base64url'), Buffer.from('["not a date","p",1]').toString('base64url'), Buffer.from('{"a":1}').toString('base64url')]) {
      expect(decodeCursor(bad)).toBeUndefined();
    }
  });

  it('property: a CSV line reads back as its fields, whatever they hold (quotes, commas, newlines)', () => {
    fc.assert(fc.property(fc.array(fc.string({ unit: 'binary' }).filter((s) => !/^[=+@\t\r-]/.test(s)), { minLength: 1, maxLength: 6 }), (fields) => {
      const line = csvLine(fields);
      expect(line.endsWith('\r\n')).toBe(true);
      expect(parseLine(line.slice(0, -2))).toEqual(fields);
    }));
  });

  it('neutralises cells a spreadsheet would run as formulas, but keeps negative amounts as numbers', () => {
    expect(csvLine(['=HYPERLINK("x")', '-5', '-cmd', '@SUM(A1)'])).toBe(`"'=HYPERLINK(""x"")",-5,'-cmd,'@SUM(A1)\r\n`);
  });

  it('builds one numbered condition per filter, the position last', () => {
    const at = new Date('2026-12-01T00:00:00Z');
    expect(whereOf({})).toEqual({ sql: '', params: [] });
    expect(whereOf({ ownerId: 'o1', asset: 'USDC', from: at }, { occurredAt: at.toISOString(), postingId: 'p', seq: 2 })).toEqual({
      sql: 'WHERE owner_id = $1 AND asset = $2 AND occurred_at >= $3 AND (occurred_at, posting_id, seq) > ($4::timestamptz, $5, $6)',
      params: ['o1', 'USDC', at, at.toISOString(), 'p', 2],
    });
  });
});
