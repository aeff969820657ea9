import { UptoEvmScheme } from '@x402/evm/upto/server';
import { type PaymentRequired, type PaymentRequirements } from './x402.types';
import { type X402Settings } from '../payment.options';

/** The `exact` requirement an agent can sign for one call at `amountMinor` (atomic units of the token). */
export function requirementsFor(settings: X402Settings, amountMinor: bigint): PaymentRequirements {
  return {
    scheme: 'exact',
    network: settings.network,
    amount: amountMinor.toString(),
    asset: settings.assetAddress,
    payTo: settings.payTo,
    maxTimeoutSeconds: settings.maxTimeoutSeconds,
    extra: { name: settings.tokenName, version: settings.tokenVersion, assetCode: settings.assetCode },
  };
}

/**
 * The `upto` requirement of a metered call: at most `maxMinor` (the hold), signed to `facilitatorAddress` (the only one
 * that may settle it), valid long enough to be collected after the effect is confirmed. Completed by `@x402/evm`'s upto
 * server scheme (Permit2 as the transfer method, the facilitator's address in `extra`), as any x402 server would.
 */
export async function uptoRequirementsFor(settings: X402Settings, maxMinor: bigint, facilitatorAddress: string): Promise<PaymentRequirements> {
  const base = { ...requirementsFor(settings, maxMinor), scheme: 'upto' as const, maxTimeoutSeconds: settings.uptoMaxTimeoutSeconds };
  const kind = { x402Version: 2, scheme: 'upto', network: settings.network as `${string}:${string}`, extra: { facilitatorAddress } };
  const enhanced = await new UptoEvmScheme().enhancePaymentRequirements(base as never, kind, []);
  return enhanced as unknown as PaymentRequirements;
}

/** PAYMENT_REQUIRED's x402 body: one requirement (`exact` for a fixed price, `upto` for a metered tool). */
export function paymentRequired(toolName: string, requirements: PaymentRequirements, error: string): PaymentRequired {
  return {
    x402Version: 2,
    error,
    resource: { url: `mcp://tollgate/tools/${encodeURIComponent(toolName)}`, description: `One call of the tool ${toolName}`, mimeType: 'application/json' },
    accepts: [requirements],
  };
}
