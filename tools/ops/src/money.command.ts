/**
 * Finance / ops CLI for money:
 *   money deposit <ownerId> <reference> <amountMinor> [--asset USDC]   credit a wallet once per external reference
 *   money wallet <ownerId>                                              available, held, debt
 *   money approvals [--owner ID] [--status pending|approved|denied|used|all]
 *   money approve|deny <approvalId> --by NAME                           the owner's recorded decision
 *   money x402                                                          x402 payments still open (and why)
 *   money statement <providerId> --from ISO --to ISO                    calls, gross, fees, refunds, net, paid
 *   money payout <providerId> --from ISO --to ISO                       pay the period's unpaid net
 *   money balances [--as-of ISO]                                        the ledger journal's balances and totals
 * `npx npm run ops -- money <command>`; PAYMENT_URL, SETTLEMENT_URL, LEDGER_URL and ADMIN_TOKEN (or the per-service
 * PAYMENT_ADMIN_TOKEN / SETTLEMENT_ADMIN_TOKEN) configure it.
 */
import { Command, InvalidArgumentError } from 'commander';
import { adminFetch, ledgerToken, show } from './cli-http';

/** The `money` subcommand of tollgate-ops. */
export function moneyCommand(): Command {
  const env = process.env;
  const program = new Command('money')
    .description('Wallets, approvals, provider statements and payouts, ledger balances.')
    .option('--payment-url <url>', 'payment base URL', env['PAYMENT_URL'] ?? 'http://127.0.0.1:3003')
    .option('--settlement-url <url>', 'settlement base URL', env['SETTLEMENT_URL'] ?? 'http://127.0.0.1:3004')
    .option('--ledger-url <url>', 'ledger base URL', env['LEDGER_URL'] ?? 'http://127.0.0.1:3005')
    .option('--token <token>', 'admin token of payment and settlement', env['ADMIN_TOKEN'])
    .option('--ledger-token <token>', 'finance or operator token of the ledger (default: $LEDGER_TOKEN, else --token)');

  type Opts = { paymentUrl: string; settlementUrl: string; ledgerUrl: string; token?: string; ledgerToken?: string };

  function admin(service: 'payment' | 'settlement', path: string, init: RequestInit = {}): Promise<Response> {
    const o = program.opts<Opts>();
    const token = o.token ?? env[service === 'payment' ? 'PAYMENT_ADMIN_TOKEN' : 'SETTLEMENT_ADMIN_TOKEN'];
    if (!token) throw new InvalidArgumentError(`an admin token is required (--token, ADMIN_TOKEN or ${service.toUpperCase()}_ADMIN_TOKEN)`);
    return adminFetch(service === 'payment' ? o.paymentUrl : o.settlementUrl, token, path, init);
  }

  const minorUnits = (v: string) => {
    if (!/^[1-9][0-9]{0,14}$/.test(v)) throw new InvalidArgumentError('a positive whole number of minor units (at most 15 digits)');
    return v;
  };
  const isoTime = (v: string) => {
    if (Number.isNaN(new Date(v).getTime())) throw new InvalidArgumentError('an ISO 8601 time');
    return new Date(v).toISOString();
  };
  const enc = encodeURIComponent;

  program.command('deposit <ownerId> <reference> <amountMinor>').description('credit a wallet (once per external reference)')
    .option('--asset <code>', 'asset code', 'USDC')
    .action(async (ownerId: string, reference: string, amountMinor: string, o: { asset: string }) =>
      show(await admin('payment', `/admin/owners/${enc(ownerId)}/deposits`, { method: 'POST', body: JSON.stringify({ reference, amount: { amountMinor: minorUnits(amountMinor), asset: o.asset } }) })));

  program.command('wallet <ownerId>').description("an owner's available, held and debt balances")
    .action(async (ownerId: string) => show(await admin('payment', `/admin/owners/${enc(ownerId)}/wallet`)));

  program.command('approvals').description('approval requests of calls above an owner threshold')
    .option('--owner <ownerId>', 'only this owner').option('--status <status>', 'pending | approved | denied | used | all', 'pending')
    .action(async (o: { owner?: string; status: string }) =>
      show(await admin('payment', `/admin/approvals?status=${enc(o.status)}${o.owner ? `&ownerId=${enc(o.owner)}` : ''}`)));

  for (const decision of ['approve', 'deny'] as const) {
    program.command(`${decision} <approvalId>`).description(`${decision} a pending call (recorded with who decided)`)
      .requiredOption('--by <name>', 'who decides (recorded)')
      .action(async (approvalId: string, o: { by: string }) =>
        show(await admin('payment', `/admin/approvals/${enc(approvalId)}/${decision}`, { method: 'POST', body: JSON.stringify({ decidedBy: o.by }) })));
  }

  program.command('x402').description('x402 payments still open: verifying, settling, and those with no verdict from the chain yet')
    .action(async () => show(await admin('payment', '/admin/x402/attempts')));

  program.command('statement <providerId>').description("a provider's statement for a period")
    .requiredOption('--from <time>', 'period start (ISO 8601)', isoTime).requiredOption('--to <time>', 'period end (ISO 8601)', isoTime)
    .action(async (providerId: string, o: { from: string; to: string }) =>
      show(await admin('settlement', `/admin/providers/${enc(providerId)}/statement?periodStart=${enc(o.from)}&periodEnd=${enc(o.to)}`)));

  program.command('payout <providerId>').description("pay a provider the period's unpaid net")
    .requiredOption('--from <time>', 'period start (ISO 8601)', isoTime).requiredOption('--to <time>', 'period end (ISO 8601)', isoTime)
    .action(async (providerId: string, o: { from: string; to: string }) =>
      show(await admin('settlement', `/admin/providers/${enc(providerId)}/payouts`, { method: 'POST', body: JSON.stringify({ periodStart: o.from, periodEnd: o.to }) })));

  program.command('balances').description("the ledger journal's balances (and totals per asset) as of a time")
    .option('--as-of <time>', 'ISO 8601 time (default: now)', isoTime)
    .action(async (o: { asOf?: string }) => {
      const p = program.opts<Opts>();
      show(await adminFetch(p.ledgerUrl, ledgerToken(p.ledgerToken, p.token), `/balances${o.asOf ? `?asOf=${enc(o.asOf)}` : ''}`));
    });

  return program;
}
