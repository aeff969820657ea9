import { decodeEnvelope, decodeProduced, type DecodedEvent, type EventDefinition } from '@tollgate/contracts';

/** Recently decoded messages of this process, by topic and exact value (most recent last). */
const recent = new Map<string, DecodedEvent<object>>();
const CAPACITY = 4096;
/** Larger messages (a provider result may be 2.5 MB) are decoded each time: the cache stays under ~256 MiB. */
const LARGEST_CACHED = 64 * 1024;

/**
 * Decodes and validates a message once per process: in the embedded mode every service's consumer receives
 * the same event, and class-validator is the dearest part of consuming it. The cache key is the exact text of the
 * message, so a different text is always validated on its own; decoded payloads are shared and must not be mutated
 * (handlers only read them). Contract violations are not cached: they throw every time.
 */
export function decodeOnce<P extends object>(def: EventDefinition<P>, value: string): DecodedEvent<P> {
  if (value.length > LARGEST_CACHED) return decodeEnvelope(def, value);
  const key = `${def.topic}\u0000${value}`;
  const hit = recent.get(key);
  if (hit) {
    recent.delete(key);
    recent.set(key, hit);
    return hit as DecodedEvent<P>;
  }
  return keep(key, decodeEnvelope(def, value));
}

/**
 * A message this process has just produced (its payload validated then), remembered as decoded for the consumers of
 * this process that receive the same text: the embedded log hands it on in process, and it is validated once, at
 * produce. A different text — anything another process wrote — is still validated when consumed.
 */
export function rememberProduced<P extends object>(def: EventDefinition<P>, value: string, payload: P): void {
  if (value.length > LARGEST_CACHED) return;
  keep(`${def.topic}\u0000${value}`, decodeProduced(def, value, payload));
}

function keep<P extends object>(key: string, decoded: DecodedEvent<P>): DecodedEvent<P> {
  recent.delete(key);
  recent.set(key, decoded);
  if (recent.size > CAPACITY) recent.delete(recent.keys().next().value!);
  return decoded;
}
