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
  // 2026-07-28 providers on the SDK v2 publish 2020-12 schemas with `$schema`; 2025-era ones draft-07.
  it('checks a 2020-12 output schema (as SDK v2 servers publish it) and a draft-07 one alike', () => {
    const modern = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] } }, required: ['pair'] };
    expect(checkResult({ structuredContent: { pair: ['a', 1] } }, modern).outcome).toBe('success');
    expect(checkResult({ structuredContent: { pair: ['a', 'b'] } }, modern)).toMatchObject({ outcome: 'contract_violation', rejection: { reason: expect.stringMatching(/pair\/1/) } });
    const older = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { words: { type: 'integer' } }, required: ['words'] };
    expect(checkResult({ structuredContent: { words: 2 } }, older).outcome).toBe('success');
    expect(checkResult({ structuredContent: { words: 'two' } }, older).outcome).toBe('contract_violation');
  });
});
