/**
 * The floor under call_tool's distributed latency on this machine (the
 * goal's floor): what one Kafka hop (publish with acks=all → a subscribed consumer
 * sees it, through the same KafkaTransport the services use) and one
 * PostgreSQL commit cost here, idle. The distributed call path has at least
 * three sequential hops (CallRequested → payment, PaymentHeld → execution,
 * ResultReceived → gateway) and seven commits (gateway call, three outbox
 * relays, payment hold, execution dispatch and result, gateway apply — each
 * consumer commit included), so its overhead cannot go below
 * 3 × hop + 7 × commit, before any service does any work.
 *
 * Needs the local Kafka. Writes tools/bench/results/transport-floor.json.
 * Run: `npm run bench:floor`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import pino from 'pino';
import { eachMessage, KafkaTransport } from '@tollgate/messaging';
import { createTestDatabase, ensureTopics } from '@tollgate/testing';
import { measure, type Stats } from './bench-stats';

const HOPS = 300;
const COMMITS = 1000;

async function kafkaHop(): Promise<Stats> {
  const brokers = (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(',');
  const prefix = `floor-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}.`;
  const topic = 'bench.floor.ping.v1';
  await ensureTopics([prefix + topic]);
  const logger = pino({ level: 'warn' });
  const producer = new KafkaTransport({ clientId: 'floor-producer', brokers, logger, topicPrefix: prefix });
  const consumer = new KafkaTransport({ clientId: 'floor-consumer', brokers, logger, topicPrefix: prefix });
  await producer.connect();
  const waiting = new Map<string, () => void>();
  const sub = await consumer.subscribe({
    groupId: 'floor', topics: [topic], fromBeginning: false,
    handleBatch: eachMessage(async (m) => waiting.get(m.key)?.()),
  });
  try {
    const hop = async (i: number) => {
      const key = `k-${i}`;
      const seen = new Promise<void>((resolve) => waiting.set(key, resolve));
      await producer.publish([{ topic, key, value: '{}' }]);
      await seen;
      waiting.delete(key);
    };
    for (let i = 0; i < 20; i++) await hop(-1 - i); // warm-up
    return await measure(HOPS, 1, hop);
  } finally {
    await sub.stop();
    await producer.close();
    await consumer.close();
  }
}

async function pgCommit(): Promise<Stats> {
  const db = await createTestDatabase('tollgate_floor');
  const c = new Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query('CREATE TABLE t (id bigserial PRIMARY KEY, v text)');
    return await measure(COMMITS, 1, async () => {
      await c.query('BEGIN');
      await c.query("INSERT INTO t (v) VALUES ('x')");
      await c.query('COMMIT');
    });
  } finally {
    await c.end();
    await db.drop();
  }
}

async function main(): Promise<void> {
  const hop = await kafkaHop();
  const commit = await pgCommit();
  const floorP50 = 3 * hop.p50Ms + 7 * commit.p50Ms;
  process.stdout.write(`Kafka hop (publish acks=all → consumer), 1 at a time: p50 ${hop.p50Ms} ms, p99 ${hop.p99Ms} ms\n`);
  process.stdout.write(`PostgreSQL commit (BEGIN; INSERT; COMMIT): p50 ${commit.p50Ms} ms, p99 ${commit.p99Ms} ms\n`);
  process.stdout.write(`floor of the distributed call overhead (3 hops + 7 commits, no service work): p50 ≈ ${floorP50.toFixed(2)} ms\n`);
  const out = path.resolve(__dirname, '../results');
  mkdirSync(out, { recursive: true });
  const file = path.join(out, 'transport-floor.json');
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, kafkaHop: hop, pgCommit: commit, floorP50Ms: +floorP50.toFixed(3) }, null, 2) + '\n');
  process.stdout.write(`written to ${file}\n`);
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`${String(e?.stack ?? e)}\n`);
  process.exit(1);
});
