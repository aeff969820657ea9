/**
 * `tollgate-ops reconcile`: the ledger's reconciliation report, and resolving what it lists.
 *   reconcile report [--older-than SECONDS]    books account by account, calls not terminal, unknown outcomes, parked
 *                                              events; exit 1 when anything is open
 *   reconcile resolve <intentId | operationKey> --decision happened|did_not_happen --operator NAME --reason TEXT
 *                                              record the operator's decision on an unknown outcome (execution)
 */
import { Command, InvalidArgumentError } from 'commander';
import { adminFetch, ledgerToken, show } from './cli-http';
import { print } from './cli-output';

const env = process.env;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Report {
  accounts: { lines: { account: string; asset: string; payment: string; settlement: string; journal: string; difference: string; status: string }[]; mismatches: number; available: boolean };
  callsNotTerminal: { olderThanSeconds: number; calls: { intentId: string; lastType: string; startedAt: string; operationKey: string | null }[] };
  unknownOutcomes: { available: boolean; open: { intentId: string; reason: string; openedAt: string }[] };
  parkedEvents: { service: string; consumer: string; topic: string; offset: string; reason: string }[];
  meteredCalls: { checked: number; problems: { intentId: string; problem: string }[] };
}

function humanReport(r: Report): string {
  const out = [`accounts: ${r.accounts.lines.length} compared, ${r.accounts.mismatches} mismatched${r.accounts.available ? '' : ' (payment or settlement book not in this database)'}`];
  for (const l of r.accounts.lines.filter((x) => x.status !== 'matched')) out.push(`  ${l.account} ${l.asset}: payment ${l.payment} settlement ${l.settlement} journal ${l.journal} (difference ${l.difference})`);
  out.push(`calls not terminal after ${r.callsNotTerminal.olderThanSeconds} s: ${r.callsNotTerminal.calls.length}`);
  for (const c of r.callsNotTerminal.calls) out.push(`  ${c.intentId} last ${c.lastType} started ${c.startedAt}`);
  out.push(`unknown outcomes open: ${r.unknownOutcomes.open.length}`);
  for (const u of r.unknownOutcomes.open) out.push(`  ${u.intentId} ${u.reason} since ${u.openedAt}`);
  out.push(`metered calls: ${r.meteredCalls.checked} checked, ${r.meteredCalls.problems.length} off the charge rule or resolved more than once`);
  for (const p of r.meteredCalls.problems) out.push(`  ${p.intentId}: ${p.problem}`);
  out.push(`parked events: ${r.parkedEvents.length}`);
  for (const p of r.parkedEvents) out.push(`  ${p.service}/${p.consumer} ${p.topic}@${p.offset}: ${p.reason}`);
  return out.join('\n');
}

const openItems = (r: Report) => r.accounts.mismatches + r.callsNotTerminal.calls.length + r.unknownOutcomes.open.length + r.parkedEvents.length + r.meteredCalls.problems.length;

export function reconcileCommand(): Command {
  const program = new Command('reconcile')
    .description('The reconciliation report (payment vs settlement vs journal; stuck calls; unknown outcomes; parked events) and resolutions.')
    .option('--ledger-url <url>', 'the ledger app (or the embedded host)', env['LEDGER_URL'] ?? 'http://127.0.0.1:3005')
    .option('--execution-url <url>', 'execution base URL (resolutions)', env['EXECUTION_URL'] ?? 'http://127.0.0.1:3002')
    .option('--token <token>', 'operator token of the ledger (default: $LEDGER_TOKEN)')
    .option('--execution-token <token>', 'execution admin token (default: $EXECUTION_ADMIN_TOKEN)', env['EXECUTION_ADMIN_TOKEN']);
  type Opts = { ledgerUrl: string; executionUrl: string; token?: string; executionToken?: string };

  program.command('report').description('the report; exit 1 when anything is open')
    .option('--older-than <seconds>', 'a call is stuck when not terminal this long after it started', '3600').option('--json', 'JSON output')
    .action(async (o: { olderThan: string; json?: boolean }) => {
      const g = program.opts<Opts>();
      const res = await adminFetch(g.ledgerUrl, ledgerToken(g.token, undefined), `/reconciliation?olderThanSeconds=${encodeURIComponent(o.olderThan)}`);
      if (!res.ok) throw new Error(`the ledger answered ${res.status}: ${await res.text()}`);
      const report = (await res.json()) as Report;
      print(o.json, report, () => humanReport(report));
      if (openItems(report) > 0) process.exitCode = 1;
    });

  program.command('resolve <intentIdOrOperationKey>').description('record the operator\'s decision on an unknown outcome (it never dispatches again)')
    .requiredOption('--decision <decision>', 'happened | did_not_happen', (v: string) => {
      if (v !== 'happened' && v !== 'did_not_happen') throw new InvalidArgumentError('happened or did_not_happen');
      return v;
    })
    .requiredOption('--operator <name>', 'who decides (recorded)').requiredOption('--reason <text>', 'why (recorded)')
    .action(async (id: string, o: { decision: string; operator: string; reason: string }) => {
      const g = program.opts<Opts>();
      if (!g.executionToken) throw new InvalidArgumentError('the execution admin token is required (--execution-token or EXECUTION_ADMIN_TOKEN)');
      let intentId = id;
      if (!UUID.test(id)) {
        const found = await adminFetch(g.ledgerUrl, ledgerToken(g.token, undefined), `/calls?operationKey=${encodeURIComponent(id)}`);
        if (!found.ok) throw new Error(`the ledger answered ${found.status}: ${await found.text()}`);
        const { calls } = (await found.json()) as { calls: { intentId: string }[] };
        if (calls.length !== 1) throw new Error(`${calls.length} calls have the operation key ${id}; resolve by intentId: ${calls.map((c) => c.intentId).join(', ')}`);
        intentId = calls[0]!.intentId;
      }
      await show(await adminFetch(g.executionUrl, g.executionToken, `/admin/reconciliations/${encodeURIComponent(intentId)}/resolve`, { method: 'POST', body: JSON.stringify(o) }));
    });
  return program;
}
