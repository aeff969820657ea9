import { Client } from 'pg';

export interface ChannelListenerOptions {
  databaseUrl: string;
  /** One channel, or several on the same connection. */
  channel: string | string[];
  /** Names the connection in pg_stat_activity. */
  applicationName: string;
  onNotification(payload: string, channel: string): void;
  /** Told when the connection is lost (once per loss); the listener keeps reconnecting by itself. */
  onLost?(error: unknown): void;
  /** Told when a lost connection is back: NOTIFYs sent meanwhile are gone, so callers catch up (drain, re-read). */
  onRestored?(): void;
  /** First back-off (ms) after a loss, doubled per failed try up to `maxRetryMs` (defaults 250 and 5000). */
  retryMs?: number;
  maxRetryMs?: number;
  /**
   * How often the idle connection is probed (ms, default 5000), and how long a probe may take before the connection
   * counts as lost (default 3000). A LISTEN connection sends nothing of its own: after a network drop leaves it
   * half-open, only a probe finds out.
   */
  heartbeatMs?: number;
  heartbeatTimeoutMs?: number;
}

/** TCP keepalive probes on an idle socket, for every connection (pools and listeners). */
export const CONNECTION_SAFETY = { keepAlive: true, keepAliveInitialDelayMillis: 5_000 } as const;
/**
 * How long establishing one connection may take. Set on the client, never on a pool: pg-pool would also apply it to
 * waiting for a free pooled client, and under load that wait is not a fault.
 */
export const CONNECT_TIMEOUT_MS = 5_000;

/**
 * One PostgreSQL connection that LISTENs on its channels — what every in-process wake-up on a commit (a relay, a
 * waiting request, a cache to drop) needs — and that comes back after any loss: a dropped
 * connection, a server restart, a database refusing connections for a while. It retries with back-off until it
 * succeeds, never a fixed number of times; `isConnected()` says the truth throughout, for readiness. Callers keep a
 * fallback (a poll, a staleness bound) for the moments between a loss and the reconnection.
 */
export class ChannelListener {
  private client?: Client;
  private stopped = true;
  private retryTimer?: NodeJS.Timeout;
  private failures = 0;
  private heartbeat?: NodeJS.Timeout;

  constructor(private readonly options: ChannelListenerOptions) {}

  /** Connects and listens; a failure here is the caller's (boot) to report. Later losses reconnect by themselves. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    clearInterval(this.heartbeat);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  isConnected(): boolean {
    return this.client !== undefined;
  }

  private get channels(): string[] {
    return Array.isArray(this.options.channel) ? this.options.channel : [this.options.channel];
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.options.databaseUrl, application_name: this.options.applicationName, ...CONNECTION_SAFETY, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    client.on('notification', (n) => {
      if (this.channels.includes(n.channel)) this.options.onNotification(n.payload ?? '', n.channel);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('LISTEN connection ended')));
    try {
      await client.connect();
      for (const channel of this.channels) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.beat(client);
  }

  /** Probes the connection on a timer; a probe that fails or outlasts its bound means the connection is gone. */
  private beat(client: Client): void {
    clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      if (this.client !== client) return;
      const bound = this.options.heartbeatTimeoutMs ?? 3_000;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`LISTEN connection did not answer a probe within ${bound} ms`)), bound);
      });
      Promise.race([client.query('SELECT 1'), late]).then(() => clearTimeout(timer), (err: unknown) => {
        clearTimeout(timer);
        this.lost(client, err);
      });
    }, this.options.heartbeatMs ?? 5_000);
    this.heartbeat.unref();
  }

  private lost(client: Client, error: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    clearInterval(this.heartbeat);
    // end() would wait for the half-open socket; the socket is dropped instead.
    (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    void client.end().catch(() => undefined);
    this.options.onLost?.(error);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    const delay = Math.min((this.options.retryMs ?? 250) * 2 ** this.failures, this.options.maxRetryMs ?? 5_000);
    this.retryTimer = setTimeout(() => {
      this.connect().then(() => {
        this.failures = 0;
        if (this.client) this.options.onRestored?.();
      }, () => {
        this.failures = Math.min(this.failures + 1, 16);
        this.scheduleReconnect();
      });
    }, delay);
    this.retryTimer.unref();
  }
}
