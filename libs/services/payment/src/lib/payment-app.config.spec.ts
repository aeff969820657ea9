import { ConfigError, loadConfig } from '@tollgate/config';
import { PaymentAppConfig } from './payment-app.config';

const PAY_TO = '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c';
const SET = { PAYMENT_X402_NETWORK: 'eip155:84532', PAYMENT_X402_PAY_TO: PAY_TO, PAYMENT_X402_CHAIN_RPC: 'https://rpc.example/base-sepolia' };

/**
 * X402 is off unless a settling facilitator is configured; the local one
 * needs an explicit opt-in; a facilitator needs its network and a real pay-to address, HTTPS unless on loopback, and
 * may be given a credential.
 */
describe('PaymentAppConfig (x402 facilitator)', () => {
  it('is off by default, and needs no x402 variable then', () => {
    expect(loadConfig(PaymentAppConfig, {}).toOptions().x402Facilitator).toEqual({ kind: 'off' });
  });

  it('refuses the local facilitator at boot unless explicitly allowed', () => {
    expect(() => loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: 'local', ...SET })).toThrow(/mint money/);
    expect(loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: 'local', PAYMENT_X402_ALLOW_LOCAL_FACILITATOR: 'true', ...SET }).toOptions().x402Facilitator).toEqual({ kind: 'local' });
  });

  it('takes an https facilitator URL with its credential, and refuses anything else', () => {
    const o = loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: 'https://x402.example/facilitator', PAYMENT_X402_FACILITATOR_TOKEN: 'a-facilitator-token-1234', ...SET }).toOptions();
    expect(o.x402Facilitator).toEqual({
      kind: 'http', url: 'https://x402.example/facilitator', timeoutMs: 10_000, token: 'a-facilitator-token-1234',
      chainRpcUrl: 'https://rpc.example/base-sepolia', chainLookbackBlocks: 50_000n,
    });
    expect(o.x402).toMatchObject({ network: 'eip155:84532', payTo: PAY_TO });
    expect(() => loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: 'on', ...SET })).toThrow(ConfigError);
  });

  it('refuses plain http to a facilitator that is not on loopback', () => {
    expect(() => loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: 'http://x402.example/facilitator', ...SET })).toThrow(/https/);
    expect(() => loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: 'http://127.0.0.1.evil.example/', ...SET })).toThrow(ConfigError);
    for (const url of ['http://127.0.0.1:4021', 'http://localhost:4021/x402', 'http://[::1]:4021']) {
      expect(loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: url, ...SET }).toOptions().x402Facilitator).toMatchObject({ kind: 'http', url });
    }
  });

  it('fails at boot when a facilitator is set without its network or a real pay-to address', () => {
    const url = { PAYMENT_X402_FACILITATOR: 'https://x402.example/facilitator' };
    expect(() => loadConfig(PaymentAppConfig, { ...url, PAYMENT_X402_PAY_TO: PAY_TO })).toThrow(/PAYMENT_X402_NETWORK/);
    expect(() => loadConfig(PaymentAppConfig, { ...url, PAYMENT_X402_NETWORK: 'eip155:84532' })).toThrow(/PAYMENT_X402_PAY_TO/);
    expect(() => loadConfig(PaymentAppConfig, { ...url, ...SET, PAYMENT_X402_PAY_TO: '0x1111111111111111111111111111111111111111' })).toThrow(/placeholder/);
    expect(() => loadConfig(PaymentAppConfig, { ...url, ...SET, PAYMENT_X402_PAY_TO: '0x0000000000000000000000000000000000000000' })).toThrow(/zero address/);
    expect(() => loadConfig(PaymentAppConfig, { ...url, ...SET, PAYMENT_X402_FACILITATOR_TOKEN: 'short' })).toThrow(ConfigError);
  });

  it('needs the chain\'s RPC with a facilitator URL (settlements are checked on the chain), https unless on loopback', () => {
    const url = { PAYMENT_X402_FACILITATOR: 'https://x402.example/facilitator' };
    const { PAYMENT_X402_CHAIN_RPC: _rpc, ...withoutRpc } = SET;
    expect(() => loadConfig(PaymentAppConfig, { ...url, ...withoutRpc })).toThrow(/PAYMENT_X402_CHAIN_RPC/);
    expect(() => loadConfig(PaymentAppConfig, { ...url, ...SET, PAYMENT_X402_CHAIN_RPC: 'http://rpc.example/' })).toThrow(/PAYMENT_X402_CHAIN_RPC/);
    expect(loadConfig(PaymentAppConfig, { ...url, ...SET, PAYMENT_X402_CHAIN_RPC: 'http://127.0.0.1:8545' }).toOptions().x402Facilitator)
      .toMatchObject({ chainRpcUrl: 'http://127.0.0.1:8545' });
    expect(loadConfig(PaymentAppConfig, { PAYMENT_X402_FACILITATOR: 'local', PAYMENT_X402_ALLOW_LOCAL_FACILITATOR: 'true', ...withoutRpc }).toOptions().x402Facilitator).toEqual({ kind: 'local' });
  });
});
