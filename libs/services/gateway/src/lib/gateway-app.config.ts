import { IsInt, IsString, Max, Min, MinLength } from 'class-validator';
import { CommonConfig, EnvVar } from '@tollgate/config';

/** Every variable the gateway app reads, validated at boot. */
export class GatewayAppConfig extends CommonConfig {
  @EnvVar({ description: 'HTTP port of the gateway app.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3000;

  @EnvVar({ description: 'Bearer token for the gateway admin API (at least 16 characters).', secret: true, type: 'string' })
  @IsString() @MinLength(16)
  GATEWAY_ADMIN_TOKEN!: string;

  @EnvVar({ description: 'How long (ms) call_tool waits for an outcome before answering that the call is still running.' })
  @IsInt() @Min(100) @Max(120_000)
  GATEWAY_CALL_WAIT_MS = 35_000;

  @EnvVar({ description: 'Deadline (ms) given to each call; the upstream runtime caps one operation at 30 s.' })
  @IsInt() @Min(100) @Max(30_000)
  GATEWAY_CALL_DEADLINE_MS = 30_000;
}
