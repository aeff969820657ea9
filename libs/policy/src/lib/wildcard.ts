/**
 * The policy dialect's tool-name patterns: `*` (everything), `prefix*`,
 * `*suffix`, `*substring*`, or an exact name. It is deliberately not
 * globbing: a `*` anywhere else is a literal character.
 */
export type ToolPattern =
  | { kind: 'all'; source: string }
  | { kind: 'exact' | 'prefix' | 'suffix' | 'contains'; source: string; text: string };

export function compilePattern(source: string): ToolPattern {
  if (source === '*' || source === '**') return { kind: 'all', source };
  const lead = source.startsWith('*');
  const trail = source.length > 1 && source.endsWith('*');
  const text = source.slice(lead ? 1 : 0, trail ? -1 : undefined);
  const kind = lead && trail ? 'contains' : lead ? 'suffix' : trail ? 'prefix' : 'exact';
  return { kind, source, text };
}

export function matches(p: ToolPattern, tool: string): boolean {
  switch (p.kind) {
    case 'all':
      return true;
    case 'exact':
      return tool === p.text;
    case 'prefix':
      return tool.startsWith(p.text);
    case 'suffix':
      return tool.endsWith(p.text);
    case 'contains':
      return tool.includes(p.text);
  }
}

/** True when the pattern has a `*` that is a literal (not at either end): such a pattern almost surely matches nothing intended. */
export function hasLiteralStar(p: ToolPattern): boolean {
  return p.kind !== 'all' && p.text.includes('*');
}

/** The first pattern matching `tool`, if any. */
export function firstMatch(patterns: readonly ToolPattern[], tool: string): ToolPattern | undefined {
  return patterns.find((p) => matches(p, tool));
}
