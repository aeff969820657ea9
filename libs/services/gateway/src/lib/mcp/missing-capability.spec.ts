import { agentErrorResult } from '@tollgate/contracts';
import { JSONRPC_MISSING_CAPABILITY, missingCapabilityOf } from './mcp-servers';

// 2026-07-28: a provider's refusal for want of a client capability the gateway never offers is the gateway's own -32021.

describe('missing client capability', () => {
  const refused = (details?: Record<string, unknown>, code: 'PROVIDER_REQUEST_ERROR' | 'PROVIDER_SYSTEM_ERROR' = 'PROVIDER_REQUEST_ERROR') =>
    agentErrorResult({ code, retryable: false, intentId: 'i-1', message: 'The provider needs client capabilities the gateway does not offer (sampling); nothing was performed.', ...(details ? { details } : {}) });

  it('becomes -32021 naming the capabilities and the call', () => {
    const error = missingCapabilityOf(refused({ requiredCapabilities: { sampling: {} } }));
    expect(error).toMatchObject({ code: JSONRPC_MISSING_CAPABILITY, data: { requiredCapabilities: { sampling: {} }, intentId: 'i-1' } });
    expect(error?.message).toMatch(/sampling/);
  });

  it('leaves every other answer alone', () => {
    expect(missingCapabilityOf(refused())).toBeUndefined();
    expect(missingCapabilityOf(refused({ requiredCapabilities: { sampling: {} } }, 'PROVIDER_SYSTEM_ERROR'))).toBeUndefined();
    expect(missingCapabilityOf({ content: [{ type: 'text', text: 'ok' }] })).toBeUndefined();
  });
});
