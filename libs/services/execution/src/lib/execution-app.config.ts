import { IsInt, Max, Min } from 'class-validator';
import { CommonConfig, EnvVar } from '@tollgate/config';

/** Every variable the execution app reads, validated at boot. */
export class ExecutionAppConfig extends CommonConfig {
  @EnvVar({ description: 'HTTP port of the execution app.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3002;
}
