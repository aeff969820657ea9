import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { createLogger } from '@tollgate/observability';
import { ChannelListener } from '@tollgate/persistence';
import { GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';

const logger = createLogger('gateway');
/** Sent when an admin changes a credential or an MCP URL (revoke, disable, profile): every replica drops its copies. */
export const IDENTITY_CHANGED_CHANNEL = 'tollgate_identity_changed';
/** The explicit staleness bound of the per-call pre-checks: a change reaches every replica within this, even if its NOTIFY is lost. */
export const IDENTITY_STALENESS_MS = 1000;

/**
 * The gateway's per-call pre-checks (the MCP URL by slug, the credential by its hash, the access policies in force)
 * answered from memory:
 * an entry lives at most IDENTITY_STALENESS_MS, and an admin change clears every replica's cache at once through
 * NOTIFY. Only successful look-ups are kept. The post-I/O re-check (R7) still reads the database.
 */
@Injectable()
export class IdentityCache implements OnModuleInit, OnApplicationShutdown {
  private readonly entries = new Map<string, { value: unknown; expires: number }>();
  private readonly listener: ChannelListener;

  constructor(@Inject(GATEWAY_OPTIONS) options: GatewayOptions) {
    this.listener = new ChannelListener({
      databaseUrl: options.databaseUrl, channel: IDENTITY_CHANGED_CHANNEL, applicationName: 'tollgate-gateway-identity',
      onNotification: () => this.clear(),
      onLost: (err) => logger.warn({ err }, 'identity change listener lost; entries expire within the staleness bound meanwhile'),
      // Changes made while it was away were not heard: forget everything.
      onRestored: () => this.clear(),
    });
  }

  onModuleInit(): Promise<void> {
    return this.listener.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.listener.stop();
  }

  async get<T>(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const hit = this.entries.get(key);
    if (hit && hit.expires > Date.now()) return hit.value as T;
    const value = await load();
    if (value !== undefined) {
      this.entries.set(key, { value, expires: Date.now() + IDENTITY_STALENESS_MS });
      if (this.entries.size > 50_000) this.entries.clear();
    } else {
      this.entries.delete(key);
    }
    return value;
  }

  clear(): void {
    this.entries.clear();
  }

  /** After an admin change: this replica drops its copies at once, the others on the NOTIFY. */
  async changed(db: { query(sql: string, parameters?: unknown[]): Promise<unknown> }): Promise<void> {
    this.clear();
    await db.query('SELECT pg_notify($1, $2)', [IDENTITY_CHANGED_CHANNEL, '']);
  }
}
