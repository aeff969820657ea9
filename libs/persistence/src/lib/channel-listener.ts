import { Client } from 'pg';

export interface ChannelListenerOptions {
  databaseUrl: string;
  channel: string;
  /** Names the connection in pg_stat_activity. */
  applicationName: string;
  onNotification(payload: string): void;
  /** Told when the connection is lost; the listener reconnects by itself after `retryMs`. */
  onLost?(error: unknown): void;
  retryMs?: number;
}

/**
 * One PostgreSQL connection that LISTENs on a channel and reconnects when it is lost — what every in-process
 * wake-up on a commit (a waiting request, a cache to drop) needs. Callers keep a fallback (a poll, a staleness
 * bound) for the moments between a loss and the reconnection.
 */
export class ChannelListener {
  private client?: Client;
  private stopped = false;

  constructor(private readonly options: ChannelListenerOptions) {}

  async start(): Promise<void> {
    this.stopped = false;
    const { databaseUrl, channel, applicationName, onNotification, onLost, retryMs } = this.options;
    const client = new Client({ connectionString: databaseUrl, application_name: applicationName });
    client.on('notification', (n) => {
      if (n.channel === channel) onNotification(n.payload ?? '');
    });
    client.on('error', (err) => {
      onLost?.(err);
      this.client = undefined;
      void client.end().catch(() => undefined);
      if (!this.stopped) setTimeout(() => void this.start().catch(() => undefined), retryMs ?? 500);
    });
    await client.connect();
    await client.query(`LISTEN ${channel}`);
    this.client = client;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }
}
