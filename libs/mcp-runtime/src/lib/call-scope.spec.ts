import { callUpstreamTool, type CallScope, incompleteScope } from './upstream-client';
import { UpstreamError } from './upstream-failures';

/** R1: a call runs only under a complete trusted scope; without one it is refused before any I/O. */
describe('call scope (R1)', () => {
  const scope: CallScope = { actor: { tenantId: 'owner-1', userId: 'agent-1' }, workspaceId: 'owner-1', toolsetId: 'url-1', serverName: 'provider-1' };

  it('names the first missing part of a scope', () => {
    expect(incompleteScope(scope)).toBeUndefined();
    expect(incompleteScope(undefined)).toBe('scope');
    expect(incompleteScope({ ...scope, actor: { tenantId: '', userId: 'a' } })).toBe('actor.tenantId');
    expect(incompleteScope({ ...scope, actor: { tenantId: 't', userId: '' } })).toBe('actor.userId');
    expect(incompleteScope({ ...scope, toolsetId: '' })).toBe('toolsetId');
    expect(incompleteScope({ ...scope, serverName: '' })).toBe('serverName');
  });

  it('refuses an unscoped call with kind "scope", before any connection (the target would have been refused otherwise)', async () => {
    const call = {
      target: { transport: 'http' as const, endpoint: 'http://127.0.0.1:9/mcp' }, deadlineAt: Date.now() + 5000,
      toolName: 'echo', arguments: {}, intentId: '00000000-0000-4000-8000-000000000000',
    };
    const refused = await callUpstreamTool({ ...call, scope: { ...scope, actor: { tenantId: '', userId: 'agent-1' } } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UpstreamError);
    expect(refused).toMatchObject({ kind: 'scope', message: expect.stringContaining('actor.tenantId') });
    // The same call with its scope reaches the network, and fails there (nothing listens on port 9).
    await expect(callUpstreamTool({ ...call, scope })).rejects.toMatchObject({ kind: expect.stringMatching(/^(refused|connection|not_sent)$/) });
  });
});
