import 'reflect-metadata';

export interface EnvVarDoc {
  description: string;
  /** Marked secrets are never logged and appear blank in .env.example. */
  secret?: boolean;
  /** The value written to .env.example (defaults to the class's default). */
  example?: string;
  /** Needed only for a variable without a default: how to convert its text. */
  type?: 'string' | 'number' | 'boolean';
}

const DOCS = Symbol('tollgate:env-docs');

/** Documents one configuration variable; `tools/ops` turns these into .env.example. */
export function EnvVar(doc: EnvVarDoc): PropertyDecorator {
  return (target, property) => {
    // A class's own copy of what it inherits: a subclass's variables never leak into its base (or its siblings).
    const own: Map<string, EnvVarDoc> | undefined = Reflect.getOwnMetadata(DOCS, target);
    const docs = own ?? new Map<string, EnvVarDoc>(Reflect.getMetadata(DOCS, target) ?? []);
    docs.set(String(property), doc);
    Reflect.defineMetadata(DOCS, docs, target);
  };
}

export function envDocsOf(cls: new () => object): Map<string, EnvVarDoc> {
  return Reflect.getMetadata(DOCS, cls.prototype) ?? new Map();
}
