import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Client } from 'pg';
import { createLogger } from '@tollgate/observability';
import { GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';

const logger = createLogger('gateway');
/** Sent (by a trigger on gateway.call) when any replica records a fact of a call: the payload is its intentId. */
export const CALL_CHANGED_CHANNEL = 'tollgate_call_changed';

/**
 * Wakes a call_tool request waiting for its call's outcome as soon as the outcome is recorded — by this instance's
 * consumer (in process) or by another replica's (PostgreSQL NOTIFY, issue 11 point 4). Waiters still re-read the call
 * row now and then as a fallback for a lost listener connection.
 */
@Injectable()
export class CallWaiters implements OnModuleInit, OnApplicationShutdown {
  private readonly waiting = new Map<string, Set<() => void>>();
  private listener?: Client;
  private stopped = false;

  constructor(@Inject(GATEWAY_OPTIONS) private readonly options: GatewayOptions) {}

  async onModuleInit(): Promise<void> {
    await this.listen();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.listener?.end().catch(() => undefined);
  }

  notify(intentId: string): void {
    for (const wake of this.waiting.get(intentId) ?? []) wake();
  }

  /** Resolves on the next notify for `intentId`, or after `ms`. */
  next(intentId: string, ms: number): Promise<void> {
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

  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.options.databaseUrl, application_name: 'tollgate-gateway-waiters' });
    client.on('notification', (n) => {
      if (n.channel === CALL_CHANGED_CHANNEL && n.payload) this.notify(n.payload);
    });
    client.on('error', (err) => {
      logger.warn({ err }, 'call outcome listener lost; reconnecting (waiters poll meanwhile)');
      this.listener = undefined;
      void client.end().catch(() => undefined);
      if (!this.stopped) setTimeout(() => void this.listen().catch(() => undefined), 500);
    });
    await client.connect();
    await client.query(`LISTEN ${CALL_CHANGED_CHANNEL}`);
    this.listener = client;
  }
}
