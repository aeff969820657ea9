import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '../../../..');

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) sourceFiles(full, out);
    else if (/\.(usecase|controller)\.ts$/.test(name)) out.push(path.relative(ROOT, full));
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
