import { compareReadBack, eligibleBindings, mayFallBack } from './call-policy';

describe('execution call policy (C4, C7, G10)', () => {
  it('falls back only when no effect can have happened', () => {
    expect(mayFallBack('refused', 'write')).toBe(true);
    expect(mayFallBack('refused', 'read')).toBe(true);
    expect(mayFallBack('connection', 'read')).toBe(true);
    expect(mayFallBack('protocol', 'read')).toBe(true);
    expect(mayFallBack('deadline', 'read')).toBe(false);
    expect(mayFallBack('connection', 'write')).toBe(false);
    expect(mayFallBack('deadline', 'write')).toBe(false);
    expect(mayFallBack('protocol', 'write')).toBe(false);
    // A call that never left is a plain failure (or the next binding), never an unknown outcome.
    expect(mayFallBack('not_sent', 'write')).toBe(true);
    expect(mayFallBack('not_sent', 'read')).toBe(true);
  });

  it('orders healthy bindings by provider and drops unhealthy ones', () => {
    const b = (providerId: string, health: string) => ({ providerId, health });
    expect(eligibleBindings([b('z', 'healthy'), b('a', 'unhealthy'), b('m', 'healthy')]).map((x) => x.providerId)).toEqual(['m', 'z']);
    expect(eligibleBindings([b('a', 'unhealthy')])).toEqual([]);
  });

  it('reads back: verified only when every compared field matches', () => {
    const spec = { tool: 'get_review_ticket', keyArgument: 'operation_key', compare: ['source_id', 'title'] };
    expect(compareReadBack(spec, { source_id: 'd', title: 't' }, { source_id: 'd', title: 't', ticket_id: 'x' })).toEqual({});
    expect(compareReadBack(spec, { source_id: 'd', title: 't' }, { source_id: 'd', title: 'T' })).toEqual({ title: { requested: 't', found: 'T' } });
    expect(compareReadBack(spec, { source_id: 'd', title: 't' }, undefined)).toEqual({ source_id: { requested: 'd', found: undefined }, title: { requested: 't', found: undefined } });
  });
});
