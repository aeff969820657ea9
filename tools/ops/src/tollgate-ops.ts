#!/usr/bin/env node
/**
 * tollgate-ops: one CLI for operators and finance staff.
 *   providers   discovery's catalog: register, sync, approve tool versions
 *   calls       calls whose outcome is unknown: list, timeline, resolve
 *   money       wallets, approvals, provider statements and payouts, ledger balances
 *   parked      parked events (dead letters): list, re-drive
 *   archive     the ledger's hash-chained event archive: verify
 *   replay      rebuild projections from the archive or the topics; --verify; --swap
 *   reconcile   the reconciliation report, and resolving what it lists
 *   inspect     an event, a call, consumer lag, parked events
 *   migrate     apply pending migrations (run once per deployment, before the services)
 * `npm run ops -- <command> --help` for each. Connections: `--embedded [--data-dir <dir>]` takes every URL, token and
 * the database from the embedded host's demo.json (and does so by itself when ./data/demo.json exists and no service URL
 * is set); otherwise each command's flags, whose defaults are the distributed ports. Exit codes: 0 done; 1 the answer is "no" (differences, a broken chain,
 * a refusal from a service); 2 could not run (bad arguments, a service or database unreachable).
 */
// First: `--embedded` sets the connection defaults every command reads when it is built.
import './embedded-connection';
import { Command, CommanderError } from 'commander';
import { archiveCommand } from './archive.command';
import { callsCommand } from './calls.command';
import { inspectCommand } from './inspect.command';
import { migrateCommand } from './migrate.command';
import { moneyCommand } from './money.command';
import { parkedCommand } from './parked.command';
import { providersCommand } from './providers.command';
import { reconcileCommand } from './reconcile.command';
import { replayCommand } from './replay.command';

export function tollgateOps(): Command {
  const program = new Command('tollgate-ops')
    .description('Operate Tollgate: the catalog, calls, money, the event archive, replay, reconciliation.')
    .addHelpText('after', '\nConnections: --embedded [--data-dir <dir>] reads every URL, token and the database from <dir>/demo.json (default ./data;\nautomatic when ./data/demo.json exists and no service URL is set); explicit flags win.\nExit codes: 0 done; 1 the answer is "no" (differences found, a broken chain, a refusal); 2 could not run.');
  for (const command of [providersCommand(), callsCommand(), moneyCommand(), parkedCommand(), archiveCommand(), replayCommand(), reconcileCommand(), inspectCommand(), migrateCommand()]) {
    program.addCommand(command);
  }
  // Usage errors exit 2 like every other failure to run; --help and --version exit 0.
  const exitOverride = (c: Command) => {
    c.exitOverride((e: CommanderError) => {
      throw e.exitCode === 0 ? e : new CommanderError(2, e.code, e.message);
    });
    c.commands.forEach(exitOverride);
  };
  exitOverride(program);
  return program;
}

/** A database that cannot be reached is named by its address, with a hint at how to point the CLI elsewhere. */
function describeFailure(e: unknown): string {
  const err = e as { code?: unknown; address?: unknown; port?: unknown; message?: unknown };
  if (err?.code === 'ECONNREFUSED' && typeof err.address === 'string') {
    return `cannot reach the database at ${err.address}:${String(err.port)}: ECONNREFUSED (connection refused — give --database-url, or --embedded for the npm start host)`;
  }
  return e instanceof Error ? e.message : String(e);
}

export function main(argv: readonly string[] = process.argv): void {
  tollgateOps().parseAsync([...argv]).catch((e: unknown) => {
    if (e instanceof CommanderError) process.exit(e.exitCode);
    process.stderr.write(`tollgate-ops: ${describeFailure(e)}\n`);
    process.exit(2);
  });
}

if (require.main === module) main();
