import { Ajv, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020';

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * Validators for JSON Schemas that providers publish, in the dialect each declares: 2020-12 (what MCP 2026-07-28
 * servers built on the SDK v2 emit, `$schema` included) with Ajv's 2020 engine, anything else (draft-07 and schemas
 * without `$schema`, as 2025-era providers publish them) with Ajv's default engine — so a provider's move to the new
 * SDK changes nothing about how its arguments and results are checked.
 */
export class ProviderSchemas {
  private readonly draft07: Ajv;
  private readonly draft2020: Ajv2020;

  constructor(options: Options) {
    this.draft07 = new Ajv(options);
    this.draft2020 = new Ajv2020(options);
  }

  /** Compiles `schema` with the engine of its dialect; throws when it does not compile. */
  compile(schema: Record<string, unknown>): ValidateFunction {
    const dialect = typeof schema['$schema'] === 'string' ? schema['$schema'].replace(/#$/, '') : undefined;
    return dialect === DRAFT_2020_12 ? this.draft2020.compile(schema) : this.draft07.compile(withoutDialect(schema));
  }
}

/** A schema naming a dialect other than 2020-12 (draft-07, draft-04…) is read by the default engine without its `$schema`. */
function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}
