import { Equals, IsBoolean, IsEthereumAddress, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength, NotEquals, ValidateIf } from 'class-validator';
import { type ConfigBase, EnvVar } from '@tollgate/config';
import { DEFAULT_X402, type PaymentOptions, type X402FacilitatorSetting } from '../payment.options';

/** off, local, an https URL, or an http URL on loopback only (a facilitator that moves money is never spoken to in clear). */
export const FACILITATOR_PATTERN = /^(off|local|https:\/\/\S+|http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?(\/\S*)?)$/;
/** The chain's JSON-RPC: https, or http on loopback (a local node). */
const RPC_PATTERN = /^(https:\/\/\S+|http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?(\/\S*)?)$/;
const PLACEHOLDER_PAY_TO = '0x1111111111111111111111111111111111111111';
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/**
 * The x402 variables, shared by the payment app's config and the embedded host's: both read, and
 * validate at boot, the same facilitator, pay-to address, network and credentials.
 */
export function WithX402Config<B extends ConfigBase>(Base: B) {
  class X402Config extends WithX402ChainConfig(Base) {
    @EnvVar({ description: 'x402 facilitator: "off" (x402 not offered), the https URL of a facilitator that verifies and settles on chain (POST /verify, /settle; plain http only on loopback), or "local" (checks signatures, settles nothing: tests and demos only).' })
    @Matches(FACILITATOR_PATTERN, { message: 'must be off, local, an https:// URL, or an http:// URL on loopback' })
    PAYMENT_X402_FACILITATOR = 'off';

    @EnvVar({ description: 'Allows PAYMENT_X402_FACILITATOR=local, which credits wallets for signatures nobody settles (anyone can mint money). Never in production.' })
    @IsBoolean()
    @ValidateIf((c: X402Config) => c.PAYMENT_X402_FACILITATOR === 'local')
    @Equals(true, { message: 'PAYMENT_X402_FACILITATOR=local settles nothing and lets anyone mint money; set PAYMENT_X402_ALLOW_LOCAL_FACILITATOR=true only for tests and demos' })
    PAYMENT_X402_ALLOW_LOCAL_FACILITATOR = false;

    @EnvVar({ description: 'x402: bearer token the payment service sends to the facilitator (verify, settle, supported), at least 16 characters.', secret: true, type: 'string' })
    @IsOptional() @IsString() @MinLength(16)
    PAYMENT_X402_FACILITATOR_TOKEN?: string;

    @EnvVar({ description: 'x402: the CAIP-2 network payments settle on; required when a facilitator is set.', type: 'string', example: 'eip155:84532' })
    @ValidateIf((c: X402Config) => c.PAYMENT_X402_FACILITATOR !== 'off' || c.PAYMENT_X402_NETWORK !== undefined)
    @Matches(/^eip155:[1-9][0-9]*$/, { message: 'must be a CAIP-2 eip155 network id; it is required when PAYMENT_X402_FACILITATOR is set' })
    PAYMENT_X402_NETWORK?: string;

    @EnvVar({ description: 'x402: the address payments are made to; required when a facilitator is set.', type: 'string', example: '' })
    @ValidateIf((c: X402Config) => c.PAYMENT_X402_FACILITATOR !== 'off' || c.PAYMENT_X402_PAY_TO !== undefined)
    @IsEthereumAddress({ message: 'must be the address payments are made to; it is required when PAYMENT_X402_FACILITATOR is set' })
    @NotEquals(ZERO_ADDRESS, { message: 'must not be the zero address' })
    @NotEquals(PLACEHOLDER_PAY_TO, { message: 'must be a real pay-to address, not the placeholder' })
    PAYMENT_X402_PAY_TO?: string;

    @EnvVar({ description: 'x402: how long (ms) to wait for the facilitator before the answer counts as unavailable (verify) or unknown (settle).' })
    @IsInt() @Min(100) @Max(60_000)
    PAYMENT_X402_FACILITATOR_TIMEOUT_MS = 10_000;

    /** The payment module's x402 options. */
    x402Options(): Pick<PaymentOptions, 'x402' | 'x402Facilitator'> {
      return {
        x402: { ...DEFAULT_X402, network: this.PAYMENT_X402_NETWORK ?? DEFAULT_X402.network, assetAddress: this.PAYMENT_X402_ASSET_ADDRESS, payTo: this.PAYMENT_X402_PAY_TO ?? DEFAULT_X402.payTo },
        x402Facilitator: x402FacilitatorOf(this.PAYMENT_X402_FACILITATOR, {
          timeoutMs: this.PAYMENT_X402_FACILITATOR_TIMEOUT_MS, token: this.PAYMENT_X402_FACILITATOR_TOKEN,
          chainRpcUrl: this.PAYMENT_X402_CHAIN_RPC, chainLookbackBlocks: this.PAYMENT_X402_CHAIN_LOOKBACK_BLOCKS,
        }),
      };
    }
  }
  return X402Config;
}

/** The chain: the token contract agents sign for, its JSON-RPC where settlements are checked (required with a facilitator URL), how far back to look. */
function WithX402ChainConfig<B extends ConfigBase>(Base: B) {
  class X402ChainConfig extends Base {
    @EnvVar({ description: 'x402: the token contract agents sign transfers of (its atomic units are the asset\'s minor units).' })
    @IsEthereumAddress()
    PAYMENT_X402_ASSET_ADDRESS = DEFAULT_X402.assetAddress;

    @EnvVar({ description: 'x402: the JSON-RPC URL of the chain payments settle on; required with a facilitator URL. Every settlement is checked against the token\'s authorization state and transfer there: a facilitator\'s answer alone never credits or refuses (https, or http on loopback).', type: 'string', example: '' })
    @ValidateIf((c: X402ChainConfig & { PAYMENT_X402_FACILITATOR: string }) => !['off', 'local'].includes(c.PAYMENT_X402_FACILITATOR) || c.PAYMENT_X402_CHAIN_RPC !== undefined)
    @Matches(RPC_PATTERN, { message: 'must be the chain\'s JSON-RPC URL (https, or http on loopback); it is required when PAYMENT_X402_FACILITATOR is a URL' })
    PAYMENT_X402_CHAIN_RPC?: string;

    @EnvVar({ description: 'x402: how many blocks back the chain is searched for the transfer that used an authorization\'s nonce.' })
    @IsInt() @Min(10) @Max(10_000_000)
    PAYMENT_X402_CHAIN_LOOKBACK_BLOCKS = 50_000;
  }
  return X402ChainConfig;
}

/** `PAYMENT_X402_FACILITATOR` (already validated) as the module's setting. */
export function x402FacilitatorOf(
  value: string, o: { timeoutMs: number; token?: string; chainRpcUrl?: string; chainLookbackBlocks: number },
): X402FacilitatorSetting {
  if (value === 'off') return { kind: 'off' };
  if (value === 'local') return { kind: 'local' };
  if (!o.chainRpcUrl) throw new Error('PAYMENT_X402_CHAIN_RPC is required with a facilitator URL');
  return {
    kind: 'http', url: value, timeoutMs: o.timeoutMs, ...(o.token ? { token: o.token } : {}),
    chainRpcUrl: o.chainRpcUrl, chainLookbackBlocks: BigInt(o.chainLookbackBlocks),
  };
}
