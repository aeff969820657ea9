import { checkResult } from './check-result';

const schema = { type: 'object', properties: { words: { type: 'integer' } }, required: ['words'], additionalProperties: false };

describe('checkResult (C4, R4: output contract, no coercion)', () => {
  it('accepts a result that meets the output schema', () => {
    expect(checkResult({ structuredContent: { words: 3 } }, schema)).toEqual({ outcome: 'success', classification: 'ok' });
  });
  it('accepts a plain result when no output schema is declared', () => {
    expect(checkResult({}, undefined).outcome).toBe('success');
  });
  it('refuses a string where an integer is declared (no type coercion)', () => {
    const v = checkResult({ structuredContent: { words: '3' } }, schema);
    expect(v.outcome).toBe('contract_violation');
    expect(v.rejection?.code).toBe('PROVIDER_CONTRACT_VIOLATION');
    expect(v.rejection?.reason).toMatch(/words/);
  });
  it('refuses missing structuredContent when a schema is declared', () => {
    expect(checkResult({}, schema).classification).toBe('structured_content_missing');
  });
  it('classifies a tool error as a provider error', () => {
    expect(checkResult({ isError: true, structuredContent: { words: 1 } }, schema)).toMatchObject({ outcome: 'provider_error', rejection: { code: 'PROVIDER_REQUEST_ERROR' } });
  });
});
