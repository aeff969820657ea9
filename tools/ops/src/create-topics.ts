/** Creates every topic listed in libs/contracts on the cluster in KAFKA_BROKERS (idempotent). */
import { Kafka, logLevel } from 'kafkajs';
import { TopicSpecs } from '@tollgate/contracts';

async function main(): Promise<void> {
  const brokers = (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(',');
  const prefix = process.env['KAFKA_TOPIC_PREFIX'] ?? '';
  const admin = new Kafka({ clientId: 'tollgate-ops', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = TopicSpecs.filter((t) => !existing.has(prefix + t.name));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((t) => ({
          topic: prefix + t.name,
          numPartitions: t.partitions,
          replicationFactor: Number(process.env['KAFKA_REPLICATION_FACTOR'] ?? 1),
          configEntries: [
            { name: 'cleanup.policy', value: t.compacted ? 'compact' : 'delete' },
            // Call results travel in ResultReceived (R6: up to 2,500,000 bytes).
            { name: 'max.message.bytes', value: '4194304' },
          ],
        })),
      });
    }
    process.stdout.write(`topics: ${TopicSpecs.length} listed, ${missing.length} created (${brokers.join(',')})\n`);
  } finally {
    await admin.disconnect();
  }
}

main().catch((e) => {
  process.stderr.write(`create-topics failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
