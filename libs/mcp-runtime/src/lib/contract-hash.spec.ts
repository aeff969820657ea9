import { contractChanges, contractHashOf } from './contract-hash';

const base = { inputSchema: { type: 'object' as const, properties: { q: { type: 'string' } } }, annotations: { readOnlyHint: true } };

describe('contractHashOf (R3: what a caller relies on)', () => {
  it('pins task support where the provider declares it, and leaves the hash of a tool without it as it was', () => {
    const plain = contractHashOf(base);
    expect(contractHashOf({ ...base, execution: {} })).toBe(plain);
    const optional = contractHashOf({ ...base, execution: { taskSupport: 'optional' } });
    expect(optional).not.toBe(plain);
    expect(contractHashOf({ ...base, execution: { taskSupport: 'required' } })).not.toBe(optional);
  });

  it('names a task-support change in the changelog', () => {
    expect(contractChanges(base, { ...base, execution: { taskSupport: 'required' } })).toEqual(['execution']);
    expect(contractChanges(base, { ...base, execution: {} })).toEqual([]);
  });
});
