/**
 * Ops CLI for calls whose outcome is unknown (B5, C6):
 *   calls unknown                                   open reconciliations (execution)
 *   calls timeline <intentId>                       every fact of one call (ledger)
 *   calls resolve <intentId> --decision happened|did_not_happen --operator NAME --reason TEXT
 * A resolution is recorded with who, when and why; it never dispatches anything again.
 * `npx npm run ops -- calls <command>`; EXECUTION_URL, EXECUTION_ADMIN_TOKEN, LEDGER_URL configure it.
 */
import { Command, InvalidArgumentError } from 'commander';
import { adminFetch, ledgerToken, show } from './cli-http';

/** The `calls` subcommand of tollgate-ops. */
export function callsCommand(): Command {
  const program = new Command('calls')
    .description('Calls whose outcome is unknown: list, inspect, resolve with a recorded decision.')
    .option('--execution-url <url>', 'execution base URL', process.env['EXECUTION_URL'] ?? 'http://127.0.0.1:3002')
    .option('--ledger-url <url>', 'ledger base URL', process.env['LEDGER_URL'] ?? 'http://127.0.0.1:3005')
    .option('--token <token>', 'execution admin token (default: $EXECUTION_ADMIN_TOKEN)', process.env['EXECUTION_ADMIN_TOKEN'])
    .option('--ledger-token <token>', 'operator token of the ledger (default: $LEDGER_TOKEN, else --token)');

  type Opts = { executionUrl: string; ledgerUrl: string; token?: string; ledgerToken?: string };

  const admin = (path: string, init: RequestInit = {}) => {
    const o = program.opts<Opts>();
    if (!o.token) throw new InvalidArgumentError('an admin token is required (--token or EXECUTION_ADMIN_TOKEN)');
    return adminFetch(o.executionUrl, o.token, path, init);
  };

  program.command('unknown').description('calls with an open reconciliation').option('--all', 'include resolved ones')
    .action(async (o: { all?: boolean }) => show(await admin(`/admin/reconciliations?status=${o.all ? 'all' : 'open'}`)));

  program.command('timeline <intentId>').description('the ledger timeline of one call')
    .action(async (intentId: string) => {
      const o = program.opts<Opts>();
      show(await adminFetch(o.ledgerUrl, ledgerToken(o.ledgerToken, o.token), `/calls/${encodeURIComponent(intentId)}`));
    });

  program.command('resolve <intentId>').description('record an operator decision on an unknown outcome')
    .requiredOption('--decision <decision>', 'happened | did_not_happen', (v: string) => {
      if (v !== 'happened' && v !== 'did_not_happen') throw new InvalidArgumentError('happened or did_not_happen');
      return v;
    })
    .requiredOption('--operator <name>', 'who decides (recorded)')
    .requiredOption('--reason <text>', 'why (recorded)')
    .action(async (intentId: string, o: { decision: string; operator: string; reason: string }) =>
      show(await admin(`/admin/reconciliations/${encodeURIComponent(intentId)}/resolve`, { method: 'POST', body: JSON.stringify(o) })));

  return program;
}
