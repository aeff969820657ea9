/**
 * Creates every topic listed in libs/contracts on the cluster in KAFKA_BROKERS (idempotent), and sets the retention of
 * the event topics: KAFKA_TOPIC_RETENTION_MS, default -1 — kept forever, so a new consumer or a replay can start from
 * offset 0. Compacted topics keep the latest value per key regardless; a notice topic (progress) keeps its own hour.
 */
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { TopicSpecs } from '@tollgate/contracts';

/** A topic's whole configuration (Kafka's alterConfigs replaces every override, so it is always given in full). */
function configOf(compacted: boolean, retention: string): { name: string; value: string }[] {
  return [
    { name: 'cleanup.policy', value: compacted ? 'compact' : 'delete' },
    ...(compacted ? [] : [{ name: 'retention.ms', value: retention }]),
    // Call results travel in ResultReceived (R6: up to 2,500,000 bytes).
    { name: 'max.message.bytes', value: '4194304' },
  ];
}

async function main(): Promise<void> {
  const brokers = (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(',');
  const prefix = process.env['KAFKA_TOPIC_PREFIX'] ?? '';
  const admin = new Kafka({ clientId: 'tollgate-ops', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const retention = process.env['KAFKA_TOPIC_RETENTION_MS'] ?? '-1';
    if (!/^(-1|\d+)$/.test(retention)) throw new Error('KAFKA_TOPIC_RETENTION_MS must be -1 (forever) or a number of ms');
    const existing = new Set(await admin.listTopics());
    const missing = TopicSpecs.filter((t) => !existing.has(prefix + t.name));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((t) => ({
          topic: prefix + t.name,
          numPartitions: t.partitions,
          replicationFactor: Number(process.env['KAFKA_REPLICATION_FACTOR'] ?? 1),
          configEntries: configOf(t.compacted, t.retentionMs !== undefined ? String(t.retentionMs) : retention),
        })),
      });
    }
    // Topics created earlier get the retention in force now.
    const older = TopicSpecs.filter((t) => !t.compacted && existing.has(prefix + t.name));
    if (older.length > 0) {
      await admin.alterConfigs({ validateOnly: false, resources: older.map((t) => ({ type: ConfigResourceTypes.TOPIC, name: prefix + t.name, configEntries: configOf(false, t.retentionMs !== undefined ? String(t.retentionMs) : retention) })) });
    }
    process.stdout.write(`topics: ${TopicSpecs.length} listed, ${missing.length} created, retention.ms ${retention} (${brokers.join(',')})\n`);
  } finally {
    await admin.disconnect();
  }
}

main().catch((e) => {
  process.stderr.write(`create-topics failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
