import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';

/** Thrown when a payload or envelope does not match its contract. `reasons` name each field. */
export class ContractViolationError extends Error {
  constructor(
    readonly contract: string,
    readonly reasons: string[],
  ) {
    super(`${contract} is invalid: ${reasons.join('; ')}`);
    this.name = 'ContractViolationError';
  }
}

function flatten(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => `${path}: ${m}`);
    return [...own, ...flatten(e.children ?? [], path)];
  });
}

/**
 * Turns a plain object into an instance of `cls` and validates it strictly:
 * unknown properties are refused, nothing is coerced.
 */
export function validateAs<T extends object>(cls: ClassConstructor<T>, plain: unknown, contract = cls.name): T {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    throw new ContractViolationError(contract, ['value must be an object']);
  }
  const instance = plainToInstance(cls, plain, { enableImplicitConversion: false });
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  if (errors.length > 0) throw new ContractViolationError(contract, flatten(errors));
  return instance;
}
