import { CallLifeEvents, ContractViolationError, decodeEnvelope, type EventDefinition, MoneyEvents } from '@tollgate/contracts';
import { type DeliveredMessage } from '@tollgate/messaging';
import { type ReplayedEvent } from './replayed-event';

/** The topics the ledger consumes, and each one's event definitions. */
const DEFINITIONS = new Map<string, EventDefinition<object>[]>();
for (const def of [...CallLifeEvents, ...MoneyEvents] as readonly EventDefinition<object>[]) DEFINITIONS.set(def.topic, [...(DEFINITIONS.get(def.topic) ?? []), def]);

export const LEDGER_TOPICS: readonly string[] = [...DEFINITIONS.keys()];

/**
 * Decodes topic messages as the live consumer does (envelope and payload validated against their contract). A message
 * that does not decode is counted, not applied — the live consumer parked it too.
 */
export async function* decodeTopicBatches(batches: AsyncIterable<DeliveredMessage[]>, refused: { count: number }): AsyncGenerator<ReplayedEvent[]> {
  for await (const batch of batches) {
    const events: ReplayedEvent[] = [];
    for (const message of batch) {
      const def = DEFINITIONS.get(message.topic)?.find((d) => message.value.includes(`"type":"${d.type}"`)) ?? DEFINITIONS.get(message.topic)?.[0];
      try {
        if (!def) throw new ContractViolationError(message.topic, ['not a ledger topic']);
        events.push({ topic: message.topic, envelope: decodeEnvelope(def, message.value).envelope });
      } catch (e) {
        if (!(e instanceof ContractViolationError)) throw e;
        refused.count += 1;
      }
    }
    yield events;
  }
}
