import { IsInt, Max, Min } from 'class-validator';
import { CommonConfig, EnvVar } from '@tollgate/config';

/** Every variable the ledger app reads, validated at boot. */
export class LedgerAppConfig extends CommonConfig {
  @EnvVar({ description: 'HTTP port of the ledger app.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3005;
}
