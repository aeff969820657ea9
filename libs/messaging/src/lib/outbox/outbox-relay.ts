import { ChannelListener } from '@tollgate/persistence';
import { type DataSource } from 'typeorm';
import { type Logger } from 'pino';
import { type EventTransport, type TransportMessage } from '../transport/event-transport';
import { select } from '@tollgate/persistence';
import { OUTBOX_CHANNEL, OUTBOX_EVENT } from './messaging-tables';

export interface OutboxRelayOptions {
  schema: string;
  dataSource: DataSource;
  /** Used for the dedicated LISTEN connection. */
  databaseUrl: string;
  transport: EventTransport;
  logger: Logger;
  /** Fallback poll when no notification came (a lost connection, a missed NOTIFY). */
  pollIntervalMs: number;
  batchSize?: number;
  /** Failure-injection points for crash tests; no production code sets them. */
  hooks?: { beforePublish?: (count: number) => Promise<void>; afterPublish?: (count: number) => Promise<void> };
}


/**
 * Publishes committed outbox rows to the transport, oldest first.
 *
 * Why it never skips an event: it keeps no "last id seen" high-water mark.
 * It selects rows still marked unpublished, so a row committed late by a long
 * transaction (with a lower id than rows already published) is simply picked
 * up on the next pass. `FOR UPDATE SKIP LOCKED` lets several relay instances
 * share one outbox without publishing a row twice in the normal case.
 *
 * Why a crash never loses one: rows are marked published only after the
 * broker acknowledged them. A crash between the two republishes the batch on
 * restart; consumers' inboxes absorb the duplicates (at-least-once).
 *
 * It wakes on the NOTIFY each commit sends (OutboxWriter), and polls only as
 * a fallback.
 */
export class OutboxRelay {
  private listener?: ChannelListener;
  private timer?: NodeJS.Timeout;
  private draining?: Promise<void>;
  private again = false;
  private stopped = true;

  constructor(private readonly options: OutboxRelayOptions) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.listen();
    this.schedulePoll();
    this.wake();
  }

  /** Stops waking up, then publishes whatever is still committed and unpublished. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.draining;
    await this.drainAll().catch((err) => this.options.logger.error({ err }, 'final outbox flush failed'));
    const listener = this.listener;
    this.listener = undefined;
    await listener?.stop();
  }

  /** Ready while its LISTEN connection is up (it reconnects by itself after any loss). */
  isReady(): boolean {
    return this.listener?.isConnected() ?? false;
  }

  /** Asks for a drain now; concurrent wake-ups collapse into one more pass. */
  wake(): void {
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = (async () => {
      do {
        this.again = false;
        try {
          await this.drainAll();
        } catch (err) {
          this.options.logger.warn({ err }, 'outbox drain failed; will retry');
          await new Promise((r) => setTimeout(r, 200));
          this.again = !this.stopped;
        }
      } while (this.again && !this.stopped);
    })().finally(() => (this.draining = undefined));
  }

  /** Publishes until no unpublished row is left. Returns the number published. */
  async drainAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.drainBatch();
      total += n;
      if (n < (this.options.batchSize ?? 200)) return total;
    }
  }

  private async drainBatch(): Promise<number> {
    const { dataSource, schema, transport } = this.options;
    return dataSource.transaction(async (manager) => {
      const rows = await select(manager, OUTBOX_EVENT, ['id', 'topic', 'key', 'envelope', 'headers'],
        `SELECT id, topic, key, envelope, headers FROM "${schema}".outbox_event
          WHERE published_at IS NULL AND (leased_until IS NULL OR leased_until < now()) ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.options.batchSize ?? 200]);
      if (rows.length === 0) return 0;
      const messages: TransportMessage[] = rows.map((r) => ({ topic: r.topic, key: r.key, value: JSON.stringify(r.envelope), ...(r.headers ? { headers: r.headers } : {}) }));
      await this.options.hooks?.beforePublish?.(rows.length);
      await transport.publish(messages);
      await this.options.hooks?.afterPublish?.(rows.length);
      await manager.query(`UPDATE "${schema}".outbox_event SET published_at = now() WHERE id = ANY($1::bigint[])`, [rows.map((r) => r.id)]);
      return rows.length;
    });
  }

  private async listen(): Promise<void> {
    const { schema, logger } = this.options;
    this.listener = new ChannelListener({
      databaseUrl: this.options.databaseUrl, channel: OUTBOX_CHANNEL, applicationName: `tollgate-relay-${schema}`,
      onNotification: (payload) => {
        if (payload === schema) this.wake();
      },
      onLost: (err) => logger.warn({ err }, 'outbox LISTEN connection lost; reconnecting with back-off (polling meanwhile)'),
      // Commits made while it was away sent NOTIFYs nobody heard: drain now.
      onRestored: () => {
        logger.info('outbox LISTEN connection restored');
        this.wake();
      },
    });
    await this.listener.start();
  }


  private schedulePoll(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.wake();
      this.schedulePoll();
    }, this.options.pollIntervalMs);
    this.timer.unref();
  }
}
