import { Kafka, logLevel } from 'kafkajs';
import { type SqlExecutor } from './event-transport';
import { NOT_COVERED_SQL } from './log-snapshot';

/** How far one consumer group is behind on one partition: the end offset minus the group's committed offset. */
export interface PartitionLag { groupId: string; topic: string; partition: number; committed: number; end: number; lag: number }

/** Lag of every consumer group (or those named) on every topic it has committed offsets for, from the broker. */
export async function kafkaConsumerLag(brokers: readonly string[], groupIds?: readonly string[]): Promise<PartitionLag[]> {
  const admin = new Kafka({ clientId: 'tollgate-ops-lag', brokers: [...brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const groups = groupIds ?? (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => !g.startsWith('tollgate-ops-'));
    const ends = new Map<string, Map<number, number>>();
    const endOf = async (topic: string) => {
      if (!ends.has(topic)) ends.set(topic, new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)])));
      return ends.get(topic)!;
    };
    const out: PartitionLag[] = [];
    for (const groupId of groups) {
      for (const { topic, partitions } of await admin.fetchOffsets({ groupId })) {
        const end = await endOf(topic);
        for (const p of partitions) {
          const committed = Number(p.offset) < 0 ? 0 : Number(p.offset);
          const high = end.get(p.partition) ?? committed;
          out.push({ groupId, topic, partition: p.partition, committed, end: high, lag: Math.max(0, high - committed) });
        }
      }
    }
    return out;
  } finally {
    await admin.disconnect();
  }
}

/**
 * The embedded mode's log: per consumer group, how many events were appended after its position (across the log's
 * topics — a group that reads only some of them is behind by at most this much).
 */
export async function eventLogConsumerLag(db: SqlExecutor): Promise<PartitionLag[]> {
  const rows = (await db.query(
    `SELECT p.group_id AS "groupId", (SELECT COALESCE(max(id), 0) FROM eventlog.event)::text AS "end",
            (SELECT count(*) FROM eventlog.event e WHERE ${NOT_COVERED_SQL})::int AS lag
       FROM eventlog.position p ORDER BY p.group_id`)) as { groupId: string; end: string; lag: number }[];
  return rows.map((r) => ({ groupId: r.groupId, topic: '*', partition: 0, committed: Number(r.end) - r.lag, end: Number(r.end), lag: r.lag }));
}
