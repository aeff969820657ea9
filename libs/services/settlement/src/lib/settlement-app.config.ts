import { IsInt, Max, Min } from 'class-validator';
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
}
