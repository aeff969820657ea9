import { ConfigError, loadConfig } from '@tollgate/config';
import { EmbeddedConfig } from './embedded.config';

/** The embedded host reads and checks x402 exactly as the payment app does. */
describe('EmbeddedConfig (x402)', () => {
  it('is off by default', () => {
    expect(loadConfig(EmbeddedConfig, {}).x402Options().x402Facilitator).toEqual({ kind: 'off' });
  });

  it('refuses the local facilitator without its allow flag, as the distributed app does', () => {
    const set = { PAYMENT_X402_NETWORK: 'eip155:84532', PAYMENT_X402_PAY_TO: '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c' };
    expect(() => loadConfig(EmbeddedConfig, { PAYMENT_X402_FACILITATOR: 'local', ...set })).toThrow(/mint money/);
    expect(loadConfig(EmbeddedConfig, { PAYMENT_X402_FACILITATOR: 'local', PAYMENT_X402_ALLOW_LOCAL_FACILITATOR: 'true', ...set }).x402Options().x402Facilitator).toEqual({ kind: 'local' });
  });

  it('honours the pay-to address, network and credential of a facilitator, and needs them', () => {
    const o = loadConfig(EmbeddedConfig, {
      PAYMENT_X402_FACILITATOR: 'http://127.0.0.1:4021', PAYMENT_X402_NETWORK: 'eip155:8453', PAYMENT_X402_PAY_TO: '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c',
      PAYMENT_X402_FACILITATOR_TOKEN: 'a-facilitator-token-1234', PAYMENT_X402_CHAIN_RPC: 'http://127.0.0.1:4021/rpc',
    }).x402Options();
    expect(o.x402).toMatchObject({ network: 'eip155:8453', payTo: '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c' });
    expect(o.x402Facilitator).toEqual({
      kind: 'http', url: 'http://127.0.0.1:4021', timeoutMs: 10_000, token: 'a-facilitator-token-1234', chainRpcUrl: 'http://127.0.0.1:4021/rpc', chainLookbackBlocks: 50_000n,
    });
    expect(() => loadConfig(EmbeddedConfig, { PAYMENT_X402_FACILITATOR: 'http://127.0.0.1:4021' })).toThrow(ConfigError);
  });
});
