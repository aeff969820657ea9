/**
 * Against the real Kafka broker: a replay from the topics (what a new consumer starting at offset 0
 * sees) rebuilds the same timelines, journal and balances as the live ledger made from the same events — compared row
 * by row, the recorded time aside (a topic does not carry when the ledger recorded an event). From a time it reads
 * only what was published since; a message that breaks its contract is counted and skipped, as the live consumer
 * parks it. Nothing is committed for any consumer group.
 */
import { type DataSource } from 'typeorm';
import { readKafkaHistory } from '@tollgate/messaging';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase, ensureTopics, paidCallEvents, TEST_KAFKA_BROKERS, testKafka, uniqueName } from '@tollgate/testing';
import { ledgerDataSourceOptions } from '../src/lib/ledger.datasource-options';
import { ReplayProjections } from '../src/lib/replay-projections/replay-projections';
import { PROJECTIONS } from '../src/lib/replay-projections/shadow-tables';
import { LEDGER_TOPICS } from '../src/lib/replay-projections/topic-source';
import { consumeLive } from './live-ledger';

jest.setTimeout(120_000);

describe('ops replay from the Kafka topics', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  const prefix = `${uniqueName('replay')}.`;
  const producer = testKafka('replay-test').producer();

  async function publish(events: { topic: string; envelope: { key: string } }[]) {
    const byTopic = new Map<string, { key: string; value: string }[]>();
    for (const e of events) byTopic.set(e.topic, [...(byTopic.get(e.topic) ?? []), { key: e.envelope.key, value: JSON.stringify(e.envelope) }]);
    await producer.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic: `${prefix}${topic}`, messages })) });
  }

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_replay_topics');
    ds = await openServiceDataSource(ledgerDataSourceOptions(db.url));
    await ensureTopics(LEDGER_TOPICS.map((t) => `${prefix}${t}`));
    await producer.connect();
  });
  afterAll(async () => {
    await producer.disconnect();
    await ds.destroy();
    await db.drop();
  });

  it('rebuilds from offset 0 what the live ledger built; from a time, only what came after; bad messages skipped', async () => {
    const first = paidCallEvents(120);
    await consumeLive(ds, first);
    await publish(first);
    const replay = new ReplayProjections(ds);
    const all = await replay.fromTopics(await readKafkaHistory(TEST_KAFKA_BROKERS, LEDGER_TOPICS, {}, prefix));
    expect(all).toMatchObject({ events: first.length, refused: 0 });
    expect(await replay.verify(PROJECTIONS, all.archiveHead, { ignoreRecordedAt: true })).toEqual([]);

    const since = new Date();
    await new Promise((r) => setTimeout(r, 50));
    const later = paidCallEvents(10, { start: new Date('2026-11-15T00:00:00Z') });
    await publish(later);
    await producer.send({ topic: `${prefix}${LEDGER_TOPICS[0]}`, acks: -1, messages: [{ key: 'x', value: '{"not":"an envelope"}' }] });
    const recent = await readKafkaHistory(TEST_KAFKA_BROKERS, LEDGER_TOPICS, { time: since }, prefix);
    expect(recent.total).toBe(later.length + 1);
    const summary = await replay.fromTopics(recent);
    expect(summary).toMatchObject({ events: later.length, refused: 1 });
    expect(Number((await ds.query(`SELECT count(DISTINCT intent_id)::int AS n FROM ledger_replay.timeline_entry`))[0].n)).toBe(10);
    // No consumer group was left behind.
    const admin = testKafka().admin();
    await admin.connect();
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
    await admin.disconnect();
    expect(groups.filter((g) => g.startsWith('tollgate-ops-replay-'))).toEqual([]);
  });
});
