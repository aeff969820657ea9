import fc from 'fast-check';
import { MAX_DEPTH, unsafeInput } from './safe-input';

/** Hostile input is refused at the edge, everything ordinary passes. */
describe('unsafeInput', () => {
  it('passes any JSON made of well-formed strings, shallow enough, without prototype keys', () => {
    const safeString = fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('\u0000'));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, safeString, fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 5 }),
      object: fc.dictionary(safeString.filter((k) => !['__proto__', 'constructor', 'prototype'].includes(k)), tie('value'), { maxKeys: 5 }),
    })).value;
    fc.assert(fc.property(json, (v) => unsafeInput(v, 'arguments') === undefined), { numRuns: 2000 });
  });

  it('refuses NUL and lone surrogates in values and keys, naming the field', () => {
    expect(unsafeInput({ a: 'x\u0000y' }, 'arguments')).toEqual({ field: 'arguments.a', problem: 'must not contain the NUL character' });
    expect(unsafeInput({ a: ['ok', '\uD800'] }, 'arguments')).toMatchObject({ field: 'arguments.a[1]' });
    expect(unsafeInput({ a: '\uDC00x' }, 'arguments')).toMatchObject({ problem: expect.stringMatching(/lone surrogate/) });
    expect(unsafeInput({ 'k\u0000': 1 }, 'arguments')).toMatchObject({ field: 'arguments key' });
    expect(unsafeInput({ a: '😀' }, 'arguments')).toBeUndefined();
  });

  it('refuses prototype keys, however they were parsed', () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      expect(unsafeInput(JSON.parse(`{"x":{"${key}":{"polluted":true}}}`), 'arguments')).toEqual({ field: `arguments.x.${key}`, problem: 'is a reserved name' });
    }
  });

  it('refuses nesting past the limit without exhausting the stack, even 100,000 deep', () => {
    const deep = (n: number) => JSON.parse('['.repeat(n) + ']'.repeat(n));
    expect(unsafeInput(deep(MAX_DEPTH), 'arguments')).toBeUndefined();
    expect(unsafeInput(deep(MAX_DEPTH + 1), 'arguments')).toMatchObject({ problem: `must not nest deeper than ${MAX_DEPTH} levels` });
    expect(unsafeInput(deep(100_000), 'arguments')).toMatchObject({ problem: expect.stringMatching(/nest/) });
  });
});
