import { IsInt, IsUUID, Min } from 'class-validator';
import { DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { defineEvent, type EventDefinition, type TopicName } from '@tollgate/contracts';
import { migrate, serviceDataSourceOptions } from '@tollgate/persistence';
import { addOutboxHeadersV3, addOutboxLeaseV5, addParkedAnswerV4, createMessagingTablesV1, createParkedEventTableV2, on, type EventHandler } from '../src';

/** A minimal event for exercising the backbone: which write (seq) it came from. */
export class ProbePayload {
  @IsUUID() intentId!: string;
  @IsInt() @Min(0) seq!: number;
}

export function probeEvent(topic: string): EventDefinition<ProbePayload> {
  return defineEvent({ type: 'ProbeRecorded', version: 1, topic: topic as TopicName, payload: ProbePayload, keyOf: (p) => p.intentId });
}

export function probeMigration(schema: string): new () => MigrationInterface {
  return class ProbeTables1764680000000 implements MigrationInterface {
    name = 'ProbeTables1764680000000';
    async up(q: QueryRunner): Promise<void> {
      await createMessagingTablesV1(q, schema);
      await createParkedEventTableV2(q, schema);
      await addOutboxHeadersV3(q, schema);
      await addParkedAnswerV4(q, schema);
      await addOutboxLeaseV5(q, schema);
      // `times` counts applications per seq: anything but 1 means an event was applied twice.
      await q.query(`CREATE TABLE "${schema}".probe_applied (seq integer PRIMARY KEY, times integer NOT NULL DEFAULT 1)`);
    }
    async down(q: QueryRunner): Promise<void> {
      await q.query(`DROP TABLE "${schema}".probe_applied`);
    }
  };
}

export async function openProbeDataSource(url: string, schema: string): Promise<DataSource> {
  const ds = new DataSource(serviceDataSourceOptions({ name: schema, schema, url, entities: [], migrations: [probeMigration(schema)], poolSize: 12 }));
  await ds.initialize();
  await migrate(ds);
  return ds;
}

export function probeHandler(event: EventDefinition<ProbePayload>, schema: string): EventHandler<ProbePayload> {
  return on(event, async ({ payload, manager }) => {
    await manager.query(
      `INSERT INTO "${schema}".probe_applied (seq) VALUES ($1) ON CONFLICT (seq) DO UPDATE SET times = probe_applied.times + 1`,
      [payload.seq],
    );
  });
}

export async function appliedCounts(ds: DataSource, schema: string): Promise<{ rows: number; maxTimes: number; seqs: number[] }> {
  const rows: { seq: number; times: number }[] = await ds.query(`SELECT seq, times FROM "${schema}".probe_applied ORDER BY seq`);
  return { rows: rows.length, maxTimes: Math.max(0, ...rows.map((r) => r.times)), seqs: rows.map((r) => r.seq) };
}
