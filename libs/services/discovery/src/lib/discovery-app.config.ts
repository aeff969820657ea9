import { IsInt, IsString, Max, Min, MinLength } from 'class-validator';
import { CommonConfig, EnvVar } from '@tollgate/config';

/** Every variable the discovery app reads, validated at boot. */
export class DiscoveryAppConfig extends CommonConfig {
  @EnvVar({ description: 'HTTP port of the discovery app.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3001;

  @EnvVar({ description: 'Bearer token for the discovery admin API (at least 16 characters).', secret: true, type: 'string' })
  @IsString() @MinLength(16)
  DISCOVERY_ADMIN_TOKEN!: string;
}
