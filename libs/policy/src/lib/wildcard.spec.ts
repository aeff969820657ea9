import fc from 'fast-check';
import { compilePattern, hasLiteralStar, matches } from './wildcard';

// Every wildcard form and its corner cases.
describe('tool-name wildcards', () => {
  const m = (pattern: string, tool: string) => matches(compilePattern(pattern), tool);

  it.each([
    ['*', 'anything', true],
    ['*', '', true],
    ['**', 'x', true],
    ['read_file', 'read_file', true],
    ['read_file', 'read_files', false],
    ['exec*', 'exec', true],
    ['exec*', 'execute', true],
    ['exec*', 'my_exec', false],
    ['*sh', 'bash', true],
    ['*sh', 'shell', false],
    ['*kill*', 'pkill_all', true],
    ['*kill*', 'kill', true],
    ['*kill*', 'kil', false],
    ['exec*cmd', 'exec_cmd', false],
    ['exec*cmd', 'exec*cmd', true],
    ['*a*b*', 'xa*by', true],
    ['*a*b*', 'xaby', false],
    ['Read_File', 'read_file', false],
  ])('%s vs %s → %s', (pattern, tool, expected) => {
    expect(m(pattern, tool)).toBe(expected);
  });

  it('flags a star in the middle as literal', () => {
    expect(hasLiteralStar(compilePattern('exec*cmd'))).toBe(true);
    expect(hasLiteralStar(compilePattern('*kill*'))).toBe(false);
    expect(hasLiteralStar(compilePattern('*'))).toBe(false);
  });

  it('property: prefix, suffix and contains patterns agree with the string functions', () => {
    const word = fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !s.includes('*'));
    fc.assert(fc.property(word, fc.string({ maxLength: 12 }), (w, tool) => {
      expect(m(`${w}*`, tool)).toBe(tool.startsWith(w));
      expect(m(`*${w}`, tool)).toBe(tool.endsWith(w));
      expect(m(`*${w}*`, tool)).toBe(tool.includes(w));
      expect(m(w, tool)).toBe(tool === w);
    }));
  });
});
