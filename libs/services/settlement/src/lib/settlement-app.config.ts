import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { CommonConfig, EnvVar } from '@tollgate/config';

/** Every variable the settlement app reads, validated at boot. */
export class SettlementAppConfig extends CommonConfig {
  @EnvVar({ description: 'HTTP port of the settlement app.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3004;

  @EnvVar({ description: 'Verification window (ms) between EffectConfirmed and capture of the hold.' })
  @IsInt() @Min(0) @Max(7 * 24 * 3600 * 1000)
  SETTLEMENT_VERIFICATION_WINDOW_MS = 2000;

  @EnvVar({ description: 'How often (ms) settlement closes due verification windows.' })
  @IsInt() @Min(50) @Max(60_000)
  SETTLEMENT_SWEEP_INTERVAL_MS = 250;

  @EnvVar({ description: 'The platform fee on each settled call, in basis points (1000 = 10 %).' })
  @IsInt() @Min(0) @Max(10_000)
  SETTLEMENT_TAKE_RATE_BPS = 1000;

  @EnvVar({ description: 'Bearer token of the statements and payouts admin API, at least 16 characters; unset: the API refuses every call.', secret: true, type: 'string' })
  @IsOptional() @IsString() @MinLength(16)
  SETTLEMENT_ADMIN_TOKEN?: string;
}
