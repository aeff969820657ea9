import { Equals, IsBoolean, IsEthereumAddress, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength, ValidateIf } from 'class-validator';
import { CommonConfig, EnvVar } from '@tollgate/config';
import { DEFAULT_VELOCITY, DEFAULT_X402, type PaymentOptions, type X402FacilitatorSetting } from './payment.options';

/** Every variable the payment app reads, validated at boot. */
export class PaymentAppConfig extends CommonConfig {
  @EnvVar({ description: 'HTTP port of the payment app.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3003;

  @EnvVar({ description: 'Bearer token of the payment admin API (deposits, spend policies, approvals), at least 16 characters; unset: the API refuses every call.', secret: true, type: 'string' })
  @IsOptional() @IsString() @MinLength(16)
  PAYMENT_ADMIN_TOKEN?: string;

  @EnvVar({ description: 'Velocity rule (platform-wide): most paid or free calls one agent may make per minute.' })
  @IsInt() @Min(1) @Max(1_000_000)
  PAYMENT_VELOCITY_CALLS_PER_MINUTE = DEFAULT_VELOCITY.maxCallsPerMinute;

  @EnvVar({ description: 'Velocity rule: most one agent may spend per minute, in minor units of the call\'s asset.' })
  @Matches(/^[1-9][0-9]{0,18}$/)
  PAYMENT_VELOCITY_SPEND_PER_MINUTE_MINOR = DEFAULT_VELOCITY.maxSpendPerMinuteMinor.toString();

  @EnvVar({ description: 'Velocity rule: how many times one agent may send the same tool and arguments within the repeat window.' })
  @IsInt() @Min(1) @Max(100_000)
  PAYMENT_VELOCITY_MAX_REPEATS = DEFAULT_VELOCITY.maxRepeats;

  @EnvVar({ description: 'Velocity rule: the repeat window (ms).' })
  @IsInt() @Min(100) @Max(3_600_000)
  PAYMENT_VELOCITY_REPEAT_WINDOW_MS = DEFAULT_VELOCITY.repeatWindowMs;

  @EnvVar({ description: 'x402: the CAIP-2 network payments settle on.' })
  @Matches(/^eip155:[1-9][0-9]*$/)
  PAYMENT_X402_NETWORK = DEFAULT_X402.network;

  @EnvVar({ description: 'x402: the token contract agents sign transfers of (its atomic units are the asset\'s minor units).' })
  @IsEthereumAddress()
  PAYMENT_X402_ASSET_ADDRESS = DEFAULT_X402.assetAddress;

  @EnvVar({ description: 'x402: the address payments are made to.' })
  @IsEthereumAddress()
  PAYMENT_X402_PAY_TO = DEFAULT_X402.payTo;

  @EnvVar({ description: 'x402 facilitator: "off" (x402 not offered), the base URL of a facilitator that verifies and settles on chain (POST /verify, /settle), or "local" (checks signatures, settles nothing: tests and demos only).' })
  @Matches(/^(off|local|https?:\/\/\S+)$/, { message: 'must be off, local or an http(s) URL' })
  PAYMENT_X402_FACILITATOR = 'off';

  @EnvVar({ description: 'Allows PAYMENT_X402_FACILITATOR=local, which credits wallets for signatures nobody settles (anyone can mint money). Never in production.' })
  @IsBoolean()
  @ValidateIf((c: PaymentAppConfig) => c.PAYMENT_X402_FACILITATOR === 'local')
  @Equals(true, { message: 'PAYMENT_X402_FACILITATOR=local settles nothing and lets anyone mint money; set PAYMENT_X402_ALLOW_LOCAL_FACILITATOR=true only for tests and demos' })
  PAYMENT_X402_ALLOW_LOCAL_FACILITATOR = false;

  @EnvVar({ description: 'x402: how long (ms) to wait for the facilitator before refusing the payment.' })
  @IsInt() @Min(100) @Max(60_000)
  PAYMENT_X402_FACILITATOR_TIMEOUT_MS = 10_000;

  toOptions(): PaymentOptions {
    return {
      databaseUrl: this.DATABASE_URL,
      outboxPollIntervalMs: this.OUTBOX_POLL_INTERVAL_MS,
      ...(this.PAYMENT_ADMIN_TOKEN ? { adminToken: this.PAYMENT_ADMIN_TOKEN } : {}),
      velocity: {
        maxCallsPerMinute: this.PAYMENT_VELOCITY_CALLS_PER_MINUTE,
        maxSpendPerMinuteMinor: BigInt(this.PAYMENT_VELOCITY_SPEND_PER_MINUTE_MINOR),
        maxRepeats: this.PAYMENT_VELOCITY_MAX_REPEATS,
        repeatWindowMs: this.PAYMENT_VELOCITY_REPEAT_WINDOW_MS,
      },
      x402: { ...DEFAULT_X402, network: this.PAYMENT_X402_NETWORK, assetAddress: this.PAYMENT_X402_ASSET_ADDRESS, payTo: this.PAYMENT_X402_PAY_TO },
      x402Facilitator: x402FacilitatorOf(this.PAYMENT_X402_FACILITATOR, this.PAYMENT_X402_FACILITATOR_TIMEOUT_MS),
    };
  }
}

/** `PAYMENT_X402_FACILITATOR` (already validated) as the module's setting. */
export function x402FacilitatorOf(value: string, timeoutMs: number): X402FacilitatorSetting {
  if (value === 'off') return { kind: 'off' };
  if (value === 'local') return { kind: 'local' };
  return { kind: 'http', url: value, timeoutMs };
}
