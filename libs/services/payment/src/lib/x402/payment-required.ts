import { type PaymentRequired, type PaymentRequirements } from './x402.types';
import { type X402Settings } from '../payment.options';

/** The requirement an agent can sign for one call of `toolName` at `amountMinor` (atomic units of the token). */
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

export function paymentRequired(settings: X402Settings, toolName: string, amountMinor: bigint, error: string): PaymentRequired {
  return {
    x402Version: 2,
    error,
    resource: { url: `mcp://tollgate/tools/${encodeURIComponent(toolName)}`, description: `One call of the tool ${toolName}`, mimeType: 'application/json' },
    accepts: [requirementsFor(settings, amountMinor)],
  };
}
