import { IsInt, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { UPSTREAM_CREDENTIALS_DESCRIPTION, UPSTREAM_CREDENTIALS_PATTERN } from '@tollgate/mcp-runtime';
import { CommonConfig, EnvVar } from '@tollgate/config';

/** Every variable the discovery app reads, validated at boot. */
export class DiscoveryAppConfig extends CommonConfig {
  @EnvVar({ description: 'HTTP port of the discovery app.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3001;

  @EnvVar({ description: 'Bearer token for the discovery admin API (at least 16 characters).', secret: true, type: 'string' })
  @IsString() @MinLength(16)
  DISCOVERY_ADMIN_TOKEN!: string;

  @EnvVar({ description: 'How often (ms) every provider is re-synced; 0 turns the schedule off.' })
  @IsInt() @Min(0) @Max(86_400_000)
  DISCOVERY_SYNC_INTERVAL_MS = 300_000;

  @EnvVar({ description: UPSTREAM_CREDENTIALS_DESCRIPTION, secret: true, example: '' })
  @Matches(UPSTREAM_CREDENTIALS_PATTERN, { message: 'must be origin=token[,origin=token...] with tokens of at least 16 characters' })
  UPSTREAM_CREDENTIALS = '';
}
