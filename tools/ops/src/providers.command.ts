/**
 * Ops CLI for discovery's catalog: `npx npm run ops -- providers <command>` or
 * `node -r @swc-node/register tools/ops/src/providers.cli.ts <command>`.
 * Talks to the discovery admin API at DISCOVERY_URL with DISCOVERY_ADMIN_TOKEN.
 */
import { Command, InvalidArgumentError } from 'commander';
import { reach } from './cli-http';

/** The `providers` subcommand of tollgate-ops. */
export function providersCommand(): Command {
  const program = new Command('providers')
    .description('Register and sync providers, review catalog tools, approve contract versions.')
    .option('--url <url>', 'discovery base URL', process.env['DISCOVERY_URL'] ?? 'http://127.0.0.1:3001')
    .option('--token <token>', 'admin token (default: $DISCOVERY_ADMIN_TOKEN)', process.env['DISCOVERY_ADMIN_TOKEN']);

  async function request(method: string, path: string, body?: unknown): Promise<void> {
    const { url, token } = program.opts<{ url: string; token?: string }>();
    if (!token) throw new InvalidArgumentError('an admin token is required (--token or DISCOVERY_ADMIN_TOKEN)');
    const res = await reach(`${url}${path}`, {
      method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    process.stdout.write(`${text}\n`);
    if (!res.ok) process.exitCode = 1;
  }

  const integer = (v: string) => {
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a whole number');
    return Number(v);
  };

  program.command('register <providerId>')
    .description('register (or update) a provider and sync its tools')
    .option('--endpoint <url>', 'Streamable HTTP endpoint')
    .option('--command <command>', 'stdio: the command that starts the provider')
    .option('--arg <arg...>', 'stdio: arguments of the command')
    .option('--category <category>', 'default category of its tools')
    .option('--price-minor <minor>', 'default price per call in minor units')
    .option('--asset <asset>', 'asset of the price', 'USDC')
    .action((providerId: string, o: { endpoint?: string; command?: string; arg?: string[]; category?: string; priceMinor?: string; asset: string }) =>
      request('POST', '/admin/providers', {
        providerId,
        ...(o.command ? { transport: 'stdio', command: o.command, args: o.arg ?? [] } : { endpoint: o.endpoint }),
        defaults: { ...(o.category ? { category: o.category } : {}), ...(o.priceMinor ? { priceMinor: o.priceMinor, asset: o.asset } : {}) },
      }));

  program.command('sync <providerId>').description('re-sync a provider now').action((id: string) => request('POST', `/admin/providers/${encodeURIComponent(id)}/sync`));
  program.command('list').description('list providers with their health and last sync report').action(() => request('GET', '/admin/providers'));
  program.command('show <toolId>').description('a catalog tool with all its versions and bindings').action((id: string) => request('GET', `/admin/tools/${encodeURIComponent(id)}`));
  program.command('approve <toolId> <version>')
    .description('put a pending contract version in force (R3)')
    .action((id: string, version: string) => request('POST', `/admin/tools/${encodeURIComponent(id)}/versions/${integer(version)}/approve`));

  return program;
}
