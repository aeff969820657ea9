import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { CallLifeEvents, type EventDefinition, MoneyEvents } from '@tollgate/contracts';
import { EVENT_TRANSPORT, type EventTransport, perBatch, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { HealthRegistry } from '@tollgate/observability';
import { type LedgerOptions } from './ledger.options';
import { LEDGER, LEDGER_OPTIONS } from './ledger.constants';
import { ArchiveEventUseCase } from './archive-events/archive-event.usecase';
import { ProjectJournalUseCase } from './project-journal/project-journal.usecase';
import { RecordTimelineUseCase } from './record-timeline/record-timeline.usecase';

@Injectable()
export class LedgerEventsHost extends ServiceEventsHost {
  constructor(
    @InjectDataSource(LEDGER) private readonly dataSource: DataSource,
    @Inject(EVENT_TRANSPORT) transport: EventTransport,
    @Inject(LEDGER_OPTIONS) private readonly options: LedgerOptions,
    health: HealthRegistry,
    private readonly record: RecordTimelineUseCase,
    private readonly journal: ProjectJournalUseCase,
    private readonly archive: ArchiveEventUseCase,
  ) {
    super(serviceEventsSettings(LEDGER, { dataSource, transport, health, options }));
  }

  /** The progress of an ops replay running now or last (`tollgate-ops replay` writes it into the shadow schema). */
  protected override figures() {
    const progress = async (column: 'events' | 'total') => {
      const [row] = await this.dataSource.query(`SELECT to_regclass('ledger_replay.progress') IS NOT NULL AS present`);
      if (!row?.present) return 0;
      return Number((await this.dataSource.query(`SELECT ${column}::bigint AS n FROM ledger_replay.progress LIMIT 1`))[0]?.n ?? 0);
    };
    return [{ name: 'ledger.replay.events', read: () => progress('events') }, { name: 'ledger.replay.total', read: () => progress('total') }];
  }

  protected consumers() {
    // One consumer, applied a batch at a time: the archive (every event, hash-chained), the timeline entries (call-life
    // events) and the journal postings (money events), one statement each. A projection is off the critical path, so
    // it lingers to apply many events per transaction.
    return [
      {
        name: 'ledger.timeline',
        lingerMs: this.options.lingerMs ?? 200,
        ...perBatch([...CallLifeEvents, ...MoneyEvents] as EventDefinition<object>[], async ({ events, manager }) => {
          await this.archive.appendAll(manager, events);
          await this.record.executeAll(manager, events);
          await this.journal.projectAll(manager, events);
        }),
      },
    ];
  }
}
