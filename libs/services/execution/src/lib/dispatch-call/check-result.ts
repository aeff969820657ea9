import { type ValidateFunction } from 'ajv';
import { type CallOutcome, ProviderSchemas } from '@tollgate/contracts';

export interface ResultVerdict {
  outcome: CallOutcome;
  classification: string;
  /** Error code when the effect is rejected. */
  rejection?: { code: string; reason: string };
}

// strict: false tolerates keywords providers commonly add; coerceTypes stays off (R4: no coercion).
const schemas = new ProviderSchemas({ strict: false, allErrors: true, coerceTypes: false });
const compiled = new Map<string, ValidateFunction>();

function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = compiled.get(key);
  if (!v) compiled.set(key, (v = schemas.compile(schema)));
  return v;
}

/**
 * The read-only confirmation (C4, R4): a tool error is the provider's
 * refusal; a declared output schema must be met by `structuredContent`.
 */
export function checkResult(result: { isError?: boolean; structuredContent?: Record<string, unknown> }, outputSchema?: Record<string, unknown> | null): ResultVerdict {
  if (result.isError) {
    return { outcome: 'provider_error', classification: 'tool_error', rejection: { code: 'PROVIDER_REQUEST_ERROR', reason: 'The provider returned a tool error.' } };
  }
  if (outputSchema) {
    if (result.structuredContent === undefined) {
      return { outcome: 'contract_violation', classification: 'structured_content_missing', rejection: { code: 'PROVIDER_CONTRACT_VIOLATION', reason: 'The tool declares an output schema but returned no structuredContent.' } };
    }
    const validate = validatorFor(outputSchema);
    if (!validate(result.structuredContent)) {
      const where = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
      return { outcome: 'contract_violation', classification: 'output_schema_mismatch', rejection: { code: 'PROVIDER_CONTRACT_VIOLATION', reason: `Output does not match the contract: ${where}`.slice(0, 500) } };
    }
  }
  return { outcome: 'success', classification: 'ok' };
}
