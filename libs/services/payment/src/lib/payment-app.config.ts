import { IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { CommonConfig, EnvVar } from '@tollgate/config';
import { DEFAULT_VELOCITY, type PaymentOptions } from './payment.options';
import { WithMppConfig } from './mpp/mpp.config';
import { WithX402Config } from './x402/x402.config';

/** Every variable the payment app reads, validated at boot. */
export class PaymentAppConfig extends WithX402Config(WithMppConfig(CommonConfig)) {
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
      ...this.x402Options(),
      mpp: this.mppOptions(this.PAYMENT_X402_FACILITATOR_TIMEOUT_MS),
    };
  }
}

