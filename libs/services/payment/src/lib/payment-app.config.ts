import { IsInt, Max, Min } from 'class-validator';
import { CommonConfig, EnvVar } from '@tollgate/config';

/** Every variable the payment app reads, validated at boot. */
export class PaymentAppConfig extends CommonConfig {
  @EnvVar({ description: 'HTTP port of the payment app.' })
  @IsInt() @Min(1) @Max(65535)
  PORT = 3003;
}
