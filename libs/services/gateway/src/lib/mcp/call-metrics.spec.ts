import { callOutcomeOf } from './call-metrics';

describe('call metrics', () => {
  it('classifies an answer by its error code: ok, refused, failed or unknown', () => {
    const err = (code: string) => ({ _meta: { 'assay/error': { code } } });
    expect(callOutcomeOf({ _meta: { 'assay/receipt': {} } })).toEqual({ outcome: 'ok', code: '' });
    expect(callOutcomeOf({})).toEqual({ outcome: 'ok', code: '' });
    expect(callOutcomeOf(err('PAYMENT_REQUIRED'))).toEqual({ outcome: 'refused', code: 'PAYMENT_REQUIRED' });
    expect(callOutcomeOf(err('TOOL_ALL_BINDINGS_FAILED'))).toEqual({ outcome: 'failed', code: 'TOOL_ALL_BINDINGS_FAILED' });
    expect(callOutcomeOf(err('IDEMPOTENCY_RESULT_UNAVAILABLE'))).toEqual({ outcome: 'unknown', code: 'IDEMPOTENCY_RESULT_UNAVAILABLE' });
  });
});
