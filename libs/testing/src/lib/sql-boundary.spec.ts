import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '../../../..');

function sourceFiles(dir: string, pattern = /\.(usecase|controller)\.ts$/, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) sourceFiles(full, pattern, out);
    else if (pattern.test(name)) out.push(path.relative(ROOT, full));
  }
  return out;
}

/** STYLE, SQL in repositories: use cases and controllers call named queries, never `.query()`. */
describe('no SQL in use cases or controllers', () => {
  it('no use case or controller of the services and apps calls .query() — every statement lives in a repository', () => {
    const files = [...sourceFiles(path.join(ROOT, 'libs')), ...sourceFiles(path.join(ROOT, 'apps'))];
    expect(files.length).toBeGreaterThan(40);
    const withSql = files.filter((f) => /\.query(<[^>]*>)?\(/.test(readFileSync(path.join(ROOT, f), 'utf8')));
    expect(withSql).toEqual([]);
  });

  it('the lint rule that refuses it covers every use case and controller, with no file exempted', () => {
    const config = readFileSync(path.join(ROOT, 'eslint.config.mjs'), 'utf8');
    const block = config.slice(config.indexOf("files: ['**/*.usecase.ts', '**/*.controller.ts']"), config.indexOf('No SQL in use cases or controllers'));
    expect(block).toContain("CallExpression[callee.property.name='query']");
    expect(block).not.toMatch(/ignores:/);
  });
});

/**
 * STYLE, one repository shape: a repository is a plain object of named statements, each taking the executor it runs on
 * first (a DataSource, or the caller's transaction) — no class, no injection, no state. The same statement then runs
 * in whichever transaction its caller holds, a use case reads which connection it uses, and tests call it directly.
 */
describe('one repository shape', () => {
  const repositories = sourceFiles(path.join(ROOT, 'libs'), /\.repository\.ts$/);

  it('every repository exports its statements as an object whose members take the executor first, never a class', () => {
    expect(repositories.length).toBeGreaterThan(20);
    const problems = repositories.flatMap((f) => {
      const text = readFileSync(path.join(ROOT, f), 'utf8');
      const objects = [...text.matchAll(/^export const (\w+) = \{\n([\s\S]*?)^\};/gm)];
      const members = objects.flatMap((o) => [...o[2]!.matchAll(/^ {2}(?:async \*?|\*)?(\w+)\(([^)]*)/gm)].map((m) => ({ name: `${o[1]}.${m[1]}`, params: m[2]!.trim() })));
      return [
        ...(/^export class |@Injectable\(\)/m.test(text) ? [`${f}: a class`] : []),
        ...(objects.length === 0 ? [`${f}: no statements object`] : []),
        ...members.filter((m) => !/^\w+: (Executor|EntityManager|DataSource|Pick<(EntityManager|DataSource), 'query'>)(,|$)/.test(m.params))
          .map((m) => `${f}: ${m.name} does not take the executor first (${m.params})`),
      ];
    });
    expect(problems).toEqual([]);
  });
});
