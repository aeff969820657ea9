import { type DataSource, type EntityManager } from 'typeorm';
import { type Logger } from 'pino';
import { ContractViolationError, DeadLetterParked, decodeEnvelope, type EventDefinition, type EventEnvelope } from '@tollgate/contracts';
import { returnedRows, select } from '@tollgate/persistence';
import { PARKED_EVENT, type ParkedEventRow } from '../outbox/messaging-tables';
import { type DeliveredMessage } from '../transport/event-transport';
import { OutboxWriter } from '../outbox/outbox-writer';
import { isTransientFailure, retryDelayMs } from './failure-policy';
import { type EventHandler, type ParkedContext } from './handler';

type ParkableHandler = EventHandler<object>;

export interface ParkingOptions {
  name: string;
  schema: string;
  dataSource: DataSource;
  logger: Logger;
  outbox?: OutboxWriter;
  onOutboxWritten?: () => void;
  /** Tries of a park's answer before it is left to ops (default 3). */
  answerAttempts?: number;
}

type ParkedKey = Pick<ParkedEventRow, 'topic' | 'partition' | 'offset'>;
const PARKED_ROW = `consumer = $1 AND topic = $2 AND partition = $3 AND "offset" = $4`;

/**
 * Parks events a consumer cannot apply, in two steps that cannot fail together:
 *
 * 1. the park itself — the reason in `parked_event`, the event id in the inbox, a DeadLetterParked event — commits in
 *    its own transaction, which runs none of the consumer's code, so the fault that made the event fail cannot roll it
 *    back and hold the partition for every tenant;
 * 2. the final answer the park owes (`onParked`, e.g. payment's refusal of a call) runs after that commit in its own
 *    transaction, a bounded number of times; one that keeps failing is recorded on the row (`answer_error`) for ops,
 *    and one interrupted by a crash is found again (`answersDue`).
 */
export class Parking {
  constructor(private readonly o: ParkingOptions) {}

  async park(message: DeliveredMessage, handler: ParkableHandler | undefined, envelope: EventEnvelope | undefined, reasons: string[]): Promise<void> {
    const { dataSource, schema, name, logger, outbox } = this.o;
    let parked = false;
    let wroteOutbox = false;
    await dataSource.transaction(async (manager) => {
      parked = returnedRows<unknown>(await manager.query(
        `INSERT INTO "${schema}".parked_event (consumer, topic, partition, "offset", event_id, key, value, reason, answer_due)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING RETURNING 1`,
        [name, message.topic, message.partition, message.offset, envelope?.eventId ?? null, message.key, message.value, reasons.join('; ').slice(0, 4000), handler?.onParked !== undefined],
      )).length > 0;
      if (envelope) {
        await manager.query(`INSERT INTO "${schema}".inbox_event (consumer, event_id, topic, partition, "offset") VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
          [name, envelope.eventId, message.topic, message.partition, message.offset]);
      }
      if (parked && outbox) {
        await outbox.append(manager, DeadLetterParked, {
          consumer: name, sourceTopic: message.topic, partition: message.partition, offset: message.offset, key: message.key, reasons, value: message.value.slice(0, 100_000),
        });
      }
      wroteOutbox = OutboxWriter.wroteOutbox(manager);
    });
    if (wroteOutbox) this.o.onOutboxWritten?.();
    logger.warn({ topic: message.topic, partition: message.partition, offset: message.offset, reasons }, 'event parked (dead letter)');
    if (parked && handler?.onParked) await this.answer(handler, message);
  }

  /** Answers parks whose answer a crash interrupted (due, neither given nor given up on). */
  async answersDue(handlerOf: (topic: string) => ParkableHandler | undefined): Promise<void> {
    const { dataSource, schema, name } = this.o;
    const due = await select(dataSource, PARKED_EVENT, ['topic', 'partition', 'offset', 'value'],
      `SELECT topic, partition, "offset", value FROM "${schema}".parked_event
        WHERE consumer = $1 AND answer_due AND answered_at IS NULL AND answer_error IS NULL ORDER BY parked_at LIMIT 100`, [name]);
    for (const row of due) {
      const handler = handlerOf(row.topic);
      if (handler) await this.answer(handler, row);
    }
  }

  /**
   * The park's answer, in its own transaction, at most `answerAttempts` times; true once given (by this or another
   * replica). The row is locked while it is given, so two replicas never answer twice.
   */
  async answer(handler: ParkableHandler, row: ParkedKey & { value: string }): Promise<boolean> {
    const attempts = this.o.answerAttempts ?? 3;
    let error: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) await new Promise((r) => setTimeout(r, retryDelayMs(attempt)));
      try {
        await this.answerOnce(handler, row);
        return true;
      } catch (e) {
        error = e;
        if (isTransientFailure(e)) return false; // the database is away: the periodic pass answers once it is back
      }
    }
    await this.o.dataSource.query(`UPDATE "${this.o.schema}".parked_event SET answer_error = $5 WHERE ${PARKED_ROW}`,
      [this.o.name, row.topic, row.partition, row.offset, `answer failed ${attempts} times: ${describe(error)}`.slice(0, 4000)]).catch(() => undefined);
    this.o.logger.error({ err: error, topic: row.topic, offset: row.offset }, 'the final answer of a parked event keeps failing; left to ops');
    return false;
  }

  private async answerOnce(handler: ParkableHandler, row: ParkedKey & { value: string }): Promise<void> {
    const { dataSource, schema, name } = this.o;
    let wroteOutbox = false;
    await dataSource.transaction(async (manager) => {
      const open = returnedRows<unknown>(await manager.query(
        `SELECT 1 FROM "${schema}".parked_event WHERE ${PARKED_ROW} AND answered_at IS NULL FOR UPDATE SKIP LOCKED`, [name, row.topic, row.partition, row.offset],
      ));
      if (open.length === 0) return;
      await handler.onParked!({ ...readParked(handler.event, row.value), manager });
      await manager.query(`UPDATE "${schema}".parked_event SET answered_at = now(), answer_error = NULL WHERE ${PARKED_ROW}`, [name, row.topic, row.partition, row.offset]);
      wroteOutbox = OutboxWriter.wroteOutbox(manager);
    });
    if (wroteOutbox) this.o.onOutboxWritten?.();
  }
  /**
   * Applies the parked events ops asked to re-drive, one transaction each; one that fails again stays parked with the
   * new reason. Each is claimed in its transaction (`FOR UPDATE SKIP LOCKED`: a replica never takes one another is
   * applying) and applied through the inbox under `<consumer>/redrive`, so no event is re-driven twice. An event whose
   * park gave a final answer is not applied again: the answer stands (and is given now if it never was).
   */
  async redrive(handlerOf: (topic: string) => ParkableHandler | undefined, stopping: () => boolean): Promise<number> {
    let resolved = 0;
    for (let i = 0; i < 100 && !stopping(); i++) {
      const outcome = await this.redriveNext(handlerOf);
      if (outcome === 'none' || outcome === 'retry-later') break;
      if (outcome === 'resolved') resolved++;
    }
    return resolved;
  }

  private async redriveNext(handlerOf: (topic: string) => ParkableHandler | undefined): Promise<'none' | 'resolved' | 'failed' | 'retry-later'> {
    const { dataSource, schema, name } = this.o;
    const after: Array<() => Promise<void> | void> = [];
    let claimed: ParkedRow | undefined;
    try {
      await dataSource.transaction(async (manager) => {
        [claimed] = await select(manager, PARKED_EVENT, ['topic', 'partition', 'offset', 'key', 'value', 'answer_due', 'answered_at'],
          `SELECT topic, partition, "offset", key, value, answer_due, answered_at FROM "${schema}".parked_event
            WHERE consumer = $1 AND redrive_requested_at IS NOT NULL AND resolved_at IS NULL ORDER BY parked_at LIMIT 1 FOR UPDATE SKIP LOCKED`, [name]);
        if (claimed) await this.applyParked(manager, claimed, handlerOf(claimed.topic), after);
      });
    } catch (error) {
      if (isTransientFailure(error) || !claimed) return 'retry-later';
      const reason = error instanceof ContractViolationError ? error.reasons.join('; ') : describe(error);
      await dataSource.query(`UPDATE "${schema}".parked_event SET redrive_requested_at = NULL, reason = $5 WHERE ${PARKED_ROW}`,
        [name, claimed.topic, claimed.partition, claimed.offset, `re-drive failed: ${reason}`.slice(0, 4000)]);
      return 'failed';
    }
    if (!claimed) return 'none';
    for (const fn of after) await Promise.resolve(fn()).catch(() => undefined);
    this.o.logger.info({ topic: claimed.topic, offset: claimed.offset }, 'parked event re-driven');
    return 'resolved';
  }

  /** In the claiming transaction: the answer owed (if any) or the handler once (the re-drive inbox decides); then resolved. */
  private async applyParked(manager: EntityManager, r: ParkedRow, handler: ParkableHandler | undefined, after: Array<() => Promise<void> | void>): Promise<void> {
    const { schema, name } = this.o;
    if (!handler) throw new Error(`no handler for ${r.topic}`);
    const key = [name, r.topic, r.partition, r.offset];
    if (r.answer_due) {
      if (!r.answered_at) await handler.onParked!({ ...readParked(handler.event, r.value), manager });
      await manager.query(`UPDATE "${schema}".parked_event SET answered_at = COALESCE(answered_at, now()), answer_error = NULL, resolved_at = now(), redrive_requested_at = NULL WHERE ${PARKED_ROW}`, key);
      if (!handler.redriveAfterAnswer) return;
    }
    const { envelope, payload } = decodeEnvelope(handler.event, r.value);
    const fresh = returnedRows<unknown>(await manager.query(
      `INSERT INTO "${schema}".inbox_event (consumer, event_id, topic, partition, "offset") VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING 1`,
      [`${name}/redrive`, envelope.eventId, r.topic, r.partition, r.offset],
    ));
    if (fresh.length > 0) await handler.handle({ payload, envelope, manager, afterCommit: (fn) => after.push(fn) });
    await manager.query(`UPDATE "${schema}".parked_event SET resolved_at = now(), redrive_requested_at = NULL WHERE ${PARKED_ROW}`, key);
  }
}

type ParkedRow = Pick<ParkedEventRow, 'topic' | 'partition' | 'offset' | 'key' | 'value' | 'answer_due' | 'answered_at'>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The parked message as its answer sees it: decoded if it keeps its contract, else the ids it names, read leniently. */
export function readParked<P extends object>(def: EventDefinition<P>, value: string): Omit<ParkedContext<P>, 'manager'> {
  try {
    const { envelope, payload } = decodeEnvelope(def, value);
    return { payload, intentId: stringIn(payload, 'intentId'), eventId: envelope.eventId };
  } catch (error) {
    if (!(error instanceof ContractViolationError)) throw error;
  }
  let plain: unknown;
  try {
    plain = JSON.parse(value);
  } catch {
    return { payload: undefined, intentId: undefined, eventId: undefined };
  }
  const payload = (plain as { payload?: unknown } | null)?.payload;
  return { payload: undefined, intentId: stringIn(payload, 'intentId'), eventId: stringIn(plain, 'eventId') };
}

function stringIn(o: unknown, key: string): string | undefined {
  const v = o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[key] : undefined;
  return typeof v === 'string' && UUID.test(v) ? v : undefined;
}

/** The reason recorded for ops: the error's message, never a stack. */
export function describe(error: unknown): string {
  return (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 1000);
}
