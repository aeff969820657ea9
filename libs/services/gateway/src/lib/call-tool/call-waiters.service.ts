import { type BeforeApplicationShutdown, Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CallProgressedPayload } from '@tollgate/contracts';
import { createLogger } from '@tollgate/observability';
import { ChannelListener } from '@tollgate/persistence';
import { GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { type ProgressNotice } from './progress-stream';

const logger = createLogger('gateway');
/** Sent (by a trigger on gateway.call) when any replica records a fact of a call: the payload is its intentId. */
export const CALL_CHANGED_CHANNEL = 'tollgate_call_changed';
/** Sent (by the replica that consumed it) for a provider's progress on a call: the payload is the CallProgressed JSON. */
export const CALL_PROGRESS_CHANNEL = 'tollgate_call_progress';

/**
 * Wakes a call_tool request waiting for its call's outcome as soon as the outcome is recorded — by this instance's
 * consumer (in process) or by another replica's (PostgreSQL NOTIFY). Waiters still re-read the call
 * row now and then as a fallback for a lost listener connection.
 *
 * The provider's progress on a call reaches the request that asked for it the same way: whichever replica consumed
 * CallProgressed sends it on CALL_PROGRESS_CHANNEL, and the replica holding the request relays it.
 *
 * When the process stops, every waiter is woken at once and no new wait lasts: the requests are answered (their outcome
 * if it is there, else "still running, retry with the same key") instead of holding the shutdown until their wait ends.
 */
@Injectable()
export class CallWaiters implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly waiting = new Map<string, Set<() => void>>();
  private readonly progress = new Map<string, (notice: ProgressNotice) => void>();
  private readonly listener: ChannelListener;
  private closing = false;

  constructor(@Inject(GATEWAY_OPTIONS) options: GatewayOptions) {
    this.listener = new ChannelListener({
      databaseUrl: options.databaseUrl, channel: [CALL_CHANGED_CHANNEL, CALL_PROGRESS_CHANNEL], applicationName: 'tollgate-gateway-waiters',
      onNotification: (payload, channel) => (channel === CALL_PROGRESS_CHANNEL ? this.progressed(payload) : payload && this.notify(payload)),
      onLost: (err) => logger.warn({ err }, 'call outcome listener lost; reconnecting (waiters re-read meanwhile)'),
      // Outcomes recorded while it was away were not heard: every waiter re-reads now.
      onRestored: () => {
        for (const intentId of [...this.waiting.keys()]) this.notify(intentId);
      },
    });
  }

  onModuleInit(): Promise<void> {
    return this.listener.start();
  }

  /** Before the HTTP server waits for its requests: none of them waits for an outcome any more. */
  beforeApplicationShutdown(): void {
    this.closing = true;
    for (const intentId of [...this.waiting.keys()]) this.notify(intentId);
  }

  /** Whether the process is stopping (a waiting request answers with what it has). */
  get stopping(): boolean {
    return this.closing;
  }

  onApplicationShutdown(): Promise<void> {
    return this.listener.stop();
  }

  /**
   * Wakes the call's waiting requests in every replica, through the transaction given (NOTIFY is sent at its commit),
   * and in this process at once. For a wake-up that no change of `gateway.call` announces (its trigger does otherwise).
   */
  async wakeEverywhere(m: Pick<EntityManager, 'query'>, intentId: string): Promise<void> {
    await m.query('SELECT pg_notify($1, $2)', [CALL_CHANGED_CHANNEL, intentId]);
    this.notify(intentId);
  }

  /** Hears the provider's progress on the call until the returned function is called (one listener per call). */
  listenProgress(intentId: string, listener: (notice: ProgressNotice) => void): () => void {
    this.progress.set(intentId, listener);
    return () => this.progress.delete(intentId);
  }

  /** Tells every replica (at the commit of the transaction given) of a provider's progress on a call. */
  async announceProgress(m: Pick<EntityManager, 'query'>, p: CallProgressedPayload): Promise<void> {
    const payload = JSON.stringify(p);
    // A NOTIFY payload is at most 8000 bytes; a notice is far smaller (its message is bounded), so this only guards.
    if (Buffer.byteLength(payload) < 8000) await m.query('SELECT pg_notify($1, $2)', [CALL_PROGRESS_CHANNEL, payload]);
  }

  private progressed(payload: string): void {
    const { intentId, ...notice } = JSON.parse(payload) as CallProgressedPayload;
    this.progress.get(intentId)?.(notice);
  }

  notify(intentId: string): void {
    for (const wake of this.waiting.get(intentId) ?? []) wake();
  }

  /** Resolves on the next notify for `intentId`, or after `ms`. */
  next(intentId: string, ms: number): Promise<void> {
    if (this.closing) return Promise.resolve();
    return new Promise((resolve) => {
      const set = this.waiting.get(intentId) ?? new Set();
      this.waiting.set(intentId, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) this.waiting.delete(intentId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
    });
  }
}
