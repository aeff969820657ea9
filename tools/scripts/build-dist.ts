/**
 * `npm run build`: the production build — plain JavaScript in `dist/`, laid out as the workspace is, so that
 * `npm ci --omit=dev --ignore-scripts` inside `dist/` gives exactly the packages the services load and nothing runs
 * TypeScript at run time. Each runnable app gets `dist/apps/<app>/main.js`; the ops CLI `dist/tools/ops/main.js`.
 *
 *   1. tsc with tsconfig.build.json (decorator metadata included: NestJS's injection needs it);
 *   2. the files a service reads beside its code (the finance console's assets);
 *   3. every workspace's package.json with its entry points moved from `.ts` to `.js`, the root's without scripts,
 *      and the lockfile unchanged (so `npm ci` installs the same versions the tests ran with).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const dist = path.join(root, 'dist');
type Manifest = Record<string, unknown> & { workspaces?: string[]; main?: unknown; types?: unknown; bin?: unknown; exports?: unknown };

/** `src/x.ts` → `src/x.js`, in any string of an entry-point field. */
function toJs(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/\.ts$/, '.js');
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJs(v)]));
  return value;
}

function readManifest(file: string): Manifest {
  return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
}

function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** The workspace folders the root's `workspaces` globs (`apps/*` …) name. */
function workspaceFolders(manifest: Manifest): string[] {
  return (manifest.workspaces ?? []).flatMap((glob) => {
    const parent = path.join(root, glob.replace(/\/\*$/, ''));
    return readdirSync(parent).map((name) => path.join(parent, name)).filter((dir) => existsSync(path.join(dir, 'package.json')));
  });
}

/** Copies the files under a built project's `src/` that are not TypeScript (assets read at run time) beside its code. */
function copyAssets(dir: string): void {
  for (const name of readdirSync(dir)) {
    const from = path.join(dir, name);
    if (statSync(from).isDirectory()) copyAssets(from);
    else if (!name.endsWith('.ts')) cpSync(from, path.join(dist, path.relative(root, from)));
  }
}

function writeManifests(manifest: Manifest, folders: string[]): void {
  const rootManifest: Manifest = { ...manifest };
  delete rootManifest['scripts'];
  writeJson(path.join(dist, 'package.json'), rootManifest);
  cpSync(path.join(root, 'package-lock.json'), path.join(dist, 'package-lock.json'));
  for (const dir of folders) {
    const m = readManifest(path.join(dir, 'package.json'));
    const out: Manifest = { ...m, ...(m.main ? { main: toJs(m.main) } : {}), ...(m.types ? { types: toJs(m.types) } : {}), ...(m.exports ? { exports: toJs(m.exports) } : {}) };
    // A bin runs the built entry (its source bin loads TypeScript); a project without a built entry has none.
    delete out.bin;
    const bins = m.bin && typeof m.bin === 'object' ? Object.keys(m.bin) : [];
    if (bins.length > 0 && existsSync(path.join(dist, path.relative(root, dir), 'main.js'))) out.bin = Object.fromEntries(bins.map((b) => [b, 'main.js']));
    writeJson(path.join(dist, path.relative(root, dir), 'package.json'), out);
  }
}

/** `dist/apps/<app>/main.js`: the one command per service, `node dist/apps/<app>/main.js`. */
function writeEntries(folders: string[]): void {
  for (const dir of folders) {
    const out = path.join(dist, path.relative(root, dir));
    if (existsSync(path.join(out, 'src', 'main.js'))) writeFileSync(path.join(out, 'main.js'), "#!/usr/bin/env node\n'use strict';\nrequire('./src/main.js');\n");
  }
  writeFileSync(path.join(dist, 'tools', 'ops', 'main.js'), "#!/usr/bin/env node\n'use strict';\nrequire('./src/tollgate-ops.js').main();\n");
}

function build(): void {
  rmSync(dist, { recursive: true, force: true });
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
  const manifest = readManifest(path.join(root, 'package.json'));
  const folders = workspaceFolders(manifest);
  for (const dir of folders) if (existsSync(path.join(dist, path.relative(root, dir), 'src'))) copyAssets(path.join(dir, 'src'));
  writeEntries(folders);
  writeManifests(manifest, folders);
  process.stdout.write(`built ${path.relative(process.cwd(), dist) || '.'}: run a service with node dist/apps/<service>/main.js after npm ci --omit=dev in dist\n`);
}

build();
