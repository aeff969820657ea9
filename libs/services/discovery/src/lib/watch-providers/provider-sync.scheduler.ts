import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type UpstreamWatch, watchUpstreamToolList } from '@tollgate/mcp-runtime';
import { createLogger } from '@tollgate/observability';
import { DISCOVERY, DISCOVERY_OPTIONS } from '../discovery.constants';
import { type DiscoveryOptions } from '../discovery.options';
import { SyncProviderUseCase, targetOf } from '../sync-provider/sync-provider.usecase';

const logger = createLogger(DISCOVERY);
/** Several list_changed notifications in a burst cause one sync. */
const DEBOUNCE_MS = 200;

/**
 * Re-syncs providers on a schedule and, for HTTP providers that keep a
 * session, when they send `notifications/tools/list_changed`. A watch that
 * drops is re-opened at the next scheduled round.
 */
@Injectable()
export class ProviderSyncScheduler {
  private timer?: NodeJS.Timeout;
  private readonly watches = new Map<string, UpstreamWatch | 'opening'>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private running = false;
  private stopped = false;

  constructor(
    @InjectDataSource(DISCOVERY) private readonly dataSource: DataSource,
    @Inject(DISCOVERY_OPTIONS) private readonly options: DiscoveryOptions,
    private readonly sync: SyncProviderUseCase,
  ) {}

  start(): void {
    if (this.options.syncIntervalMs > 0) this.timer = setInterval(() => void this.round(), this.options.syncIntervalMs);
    void this.watchAll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const t of this.pending.values()) clearTimeout(t);
    await Promise.all([...this.watches.values()].map((w) => (w === 'opening' ? undefined : w.close().catch(() => undefined))));
    this.watches.clear();
  }

  /** One scheduled round: every provider is re-synced, one at a time. */
  async round(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      const rows: { provider_id: string }[] = await this.dataSource.query('SELECT provider_id FROM discovery.provider ORDER BY provider_id');
      for (const r of rows) {
        if (this.stopped) return;
        await this.sync.execute(r.provider_id).catch((err) => logger.error({ err, providerId: r.provider_id }, 'scheduled sync failed'));
      }
      await this.watchAll();
    } finally {
      this.running = false;
    }
  }

  private async watchAll(): Promise<void> {
    const rows: { provider_id: string }[] = await this.dataSource.query(`SELECT provider_id FROM discovery.provider WHERE transport = 'http'`);
    for (const r of rows) this.watch(r.provider_id);
  }

  /** Opens a session to hear list_changed from this provider (HTTP only; a stdio provider is not kept running). */
  watch(providerId: string): void {
    if (this.stopped || this.watches.has(providerId)) return;
    this.watches.set(providerId, 'opening');
    void (async () => {
      const [p] = await this.dataSource.query('SELECT * FROM discovery.provider WHERE provider_id = $1', [providerId]);
      if (!p || p.transport !== 'http') return this.watches.delete(providerId);
      try {
        const w = await watchUpstreamToolList(targetOf(p), () => this.syncSoon(providerId), () => this.watches.delete(providerId));
        if (this.stopped) return void w.close();
        this.watches.set(providerId, w);
      } catch {
        this.watches.delete(providerId);
      }
    })();
  }

  private syncSoon(providerId: string): void {
    clearTimeout(this.pending.get(providerId));
    this.pending.set(providerId, setTimeout(() => {
      this.pending.delete(providerId);
      logger.info({ providerId }, 'tools/list_changed received: re-syncing');
      void this.sync.execute(providerId).catch((err) => logger.error({ err, providerId }, 'sync after list_changed failed'));
    }, DEBOUNCE_MS));
  }
}
