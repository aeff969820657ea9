import { ConfigError, loadConfig } from '@tollgate/config';
import { PaymentAppConfig } from './payment-app.config';

/** Issue 12 point 1: x402 is off unless a settling facilitator is configured; the local one needs an explicit opt-in. */
describe('PaymentAppConfig (x402 facilitator)', () => {
  it('is off by default', () => {
    expect(loadConfig(PaymentAppConfig, {}).toOptions().x402Facilitator).toEqual({ kind: 'off' });
  });

  it('refuses the local facilitator at boot unless explicitly allowed', () => {
    expect(() => loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: 'local' })).toThrow(ConfigError);
    expect(() => loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: 'local' })).toThrow(/mint money/);
    expect(loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: 'local', PAYMENT_X402_ALLOW_LOCAL_FACILITATOR: 'true' }).toOptions().x402Facilitator).toEqual({ kind: 'local' });
  });

  it('takes a facilitator URL, and refuses anything else', () => {
    expect(loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: 'https://x402.example/facilitator' }).toOptions().x402Facilitator)
      .toEqual({ kind: 'http', url: 'https://x402.example/facilitator', timeoutMs: 10_000 });
    expect(() => loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: 'on' })).toThrow(ConfigError);
  });
});
