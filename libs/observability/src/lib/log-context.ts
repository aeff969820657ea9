import { AsyncLocalStorage } from 'node:async_hooks';

/** Fields added to every log line written inside `withLogContext` (e.g. the call's intentId). */
export interface LogContext {
  intentId?: string;
  [field: string]: string | number | undefined;
}

const storage = new AsyncLocalStorage<LogContext>();

export function withLogContext<T>(ctx: LogContext, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...ctx }, fn);
}

export function currentLogContext(): LogContext {
  return storage.getStore() ?? {};
}
