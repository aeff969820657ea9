/**
 * Ops CLI for the ledger's event archive:
 *   archive verify [--expect-head <position>:<hash>]   walk the hash chain; exit 1 on a gap, a broken link or a hash
 *                                                       mismatch — or when a head recorded earlier is no longer there
 * Prints `{ ok, rows, head, problem? }`. Record the head it prints (e.g. in the daily close): a later `--expect-head`
 * proves nothing up to that position was rewritten, even by someone who re-hashed the rest of the chain.
 * `npx npm run ops -- archive verify --ledger-url http://127.0.0.1:3005 --admin-token $LEDGER_ADMIN_TOKEN`.
 */
import { Command } from 'commander';
import { adminFetch } from './cli-http';

/** The `archive` subcommand of tollgate-ops. */
export function archiveCommand(): Command {
  interface Verdict { ok: boolean; rows: number; head: { position: number; hash: string }; problem?: unknown }

  const program = new Command('archive')
    .description('The ledger\'s append-only, hash-chained archive of every event it consumed.')
    .option('--ledger-url <url>', 'the ledger app (or the embedded host)', process.env['LEDGER_URL'] ?? 'http://127.0.0.1:3005')
    .option('--admin-token <token>', 'the ledger admin token', process.env['LEDGER_ADMIN_TOKEN']);

  program.command('verify').description('walk the chain and recompute every hash')
    .option('--expect-head <position:hash>', 'a head printed by an earlier verify, which must still be in the chain')
    .action(async (o: { expectHead?: string }) => {
      const { ledgerUrl, adminToken } = program.opts<{ ledgerUrl: string; adminToken?: string }>();
      if (!adminToken) throw new Error('the ledger admin token is required (--admin-token or LEDGER_ADMIN_TOKEN)');
      const res = await adminFetch(ledgerUrl, adminToken, '/admin/archive/verify');
      if (!res.ok) throw new Error(`the ledger answered ${res.status}: ${await res.text()}`);
      const verdict = (await res.json()) as Verdict;
      process.stdout.write(`${JSON.stringify(verdict)}\n`);
      if (!verdict.ok) process.exitCode = 1;
      if (o.expectHead) {
        const [position, hash] = o.expectHead.split(':');
        // The chain verified up to its head; the recorded head must still be in it, its hash unchanged.
        const at = await adminFetch(ledgerUrl, adminToken, `/admin/archive/positions/${Number(position)}`);
        const row = at.ok ? ((await at.json()) as { hash: string }) : undefined;
        if (!verdict.ok || !row || row.hash !== hash) {
          process.stdout.write(`the recorded head ${o.expectHead} is not in the chain any more\n`);
          process.exitCode = 1;
        }
      }
    });

  return program;
}
