/**
 * What the gateway accepts from an agent before anything reaches PostgreSQL, a hash or a provider:
 * strings PostgreSQL can store (no NUL) and that are well-formed UTF-16 (no lone surrogates), no keys that name
 * JavaScript's prototype machinery, nesting no deeper than MAX_DEPTH and no more than MAX_NODES values. The walk is
 * iterative, so hostile nesting cannot exhaust the stack.
 */
export const MAX_DEPTH = 64;
export const MAX_NODES = 100_000;
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
// eslint-disable-next-line no-control-regex
const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export interface InputProblem { field: string; problem: string }

function stringProblem(s: string): string | undefined {
  if (NUL.test(s)) return 'must not contain the NUL character';
  if (LONE_SURROGATE.test(s)) return 'must be valid Unicode (a lone surrogate was found)';
  return undefined;
}

/**
 * The first problem found in `value` (named by its path under `root`), or undefined when it is safe to handle.
 * `shapeOnly` checks nesting and size alone (the discovery tools clean their strings themselves, G3.1).
 */
export function unsafeInput(value: unknown, root: string, shapeOnly = false): InputProblem | undefined {
  const stack: { v: unknown; path: string; depth: number }[] = [{ v: value, path: root, depth: 0 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { v, path, depth } = stack.pop()!;
    if (++nodes > MAX_NODES) return { field: root, problem: `must hold at most ${MAX_NODES} values` };
    if (typeof v === 'string') {
      const p = shapeOnly ? undefined : stringProblem(v);
      if (p) return { field: path, problem: p };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_DEPTH) return { field: path, problem: `must not nest deeper than ${MAX_DEPTH} levels` };
    if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ v: item, path: `${path}[${i}]`, depth: depth + 1 }));
      continue;
    }
    for (const [k, child] of Object.entries(v)) {
      if (!shapeOnly && PROTOTYPE_KEYS.has(k)) return { field: `${path}.${k}`, problem: 'is a reserved name' };
      const p = shapeOnly ? undefined : stringProblem(k);
      if (p) return { field: `${path} key`, problem: p };
      stack.push({ v: child, path: `${path}.${k}`, depth: depth + 1 });
    }
  }
  return undefined;
}
