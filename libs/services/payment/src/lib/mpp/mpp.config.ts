import { IsOptional, IsString, Matches, MinLength, ValidateIf } from 'class-validator';
import { type ConfigBase, EnvVar } from '@tollgate/config';
import { type MppSetting } from '../payment.options';

/** The sandbox method's backend: http on loopback, or https. */
const SANDBOX_PATTERN = /^(off|https:\/\/\S+|http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?(\/\S*)?)$/;

/**
 * MPP (the `Payment` HTTP authentication scheme) beside x402: the payment method and the secret challenges are bound
 * with. No MPP network is reachable from here, so the one method shipped is a sandbox (mppx's `Method.from`, verified
 * by a separate backend process); production methods (Tempo, Stripe) plug into the same place.
 */
export function WithMppConfig<B extends ConfigBase>(Base: B) {
  class MppConfig extends Base {
    @EnvVar({ description: 'MPP: "off" (not offered), or the URL of the sandbox payment method\'s backend (tests and demos: no real money moves; plain http only on loopback).' })
    @Matches(SANDBOX_PATTERN, { message: 'must be off, an https:// URL, or an http:// URL on loopback' })
    PAYMENT_MPP_SANDBOX = 'off';

    @EnvVar({ description: 'MPP: the secret challenges are bound with (HMAC; at least 32 characters); required when MPP is offered.', secret: true, type: 'string' })
    @ValidateIf((c: MppConfig) => c.PAYMENT_MPP_SANDBOX !== 'off' || c.PAYMENT_MPP_SECRET_KEY !== undefined)
    @IsString() @MinLength(32, { message: 'must be at least 32 characters; it is required when PAYMENT_MPP_SANDBOX is set' })
    PAYMENT_MPP_SECRET_KEY?: string;

    @EnvVar({ description: 'MPP: the realm challenges name (a credential for another realm is refused).' })
    @IsString() @MinLength(1)
    PAYMENT_MPP_REALM = 'tollgate';

    @EnvVar({ description: 'MPP: bearer token payment sends to the sandbox backend, at least 16 characters.', secret: true, type: 'string' })
    @IsOptional() @IsString() @MinLength(16)
    PAYMENT_MPP_SANDBOX_TOKEN?: string;

    mppOptions(timeoutMs: number): MppSetting {
      if (this.PAYMENT_MPP_SANDBOX === 'off' || !this.PAYMENT_MPP_SECRET_KEY) return { kind: 'off' };
      return {
        kind: 'sandbox', url: this.PAYMENT_MPP_SANDBOX, secretKey: this.PAYMENT_MPP_SECRET_KEY, realm: this.PAYMENT_MPP_REALM, timeoutMs,
        ...(this.PAYMENT_MPP_SANDBOX_TOKEN ? { token: this.PAYMENT_MPP_SANDBOX_TOKEN } : {}),
      };
    }
  }
  return MppConfig;
}
