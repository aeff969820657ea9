/**
 * Child process for the crash test: commits `count` probe events through the
 * outbox, then starts the relay and parks forever at the requested point
 * (`before` the broker publish, or `after` the broker ack but before the rows
 * are marked published), so the parent can kill -9 it right there.
 *   node -r @swc-node/register relay-crash.fixture.ts <before|after> <dbUrl> <schema> <topic> <count>
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createLogger } from '@tollgate/observability';
import { KafkaTransport, OutboxRelay, OutboxWriter } from '../src';
import { openProbeDataSource, probeEvent } from './probe.fixture';

async function main(): Promise<void> {
  const [mode, url, schema, topic, count] = process.argv.slice(2) as [string, string, string, string, string];
  const logger = createLogger('relay-crash-fixture', 'warn');
  const ds = await openProbeDataSource(url, schema);
  const event = probeEvent(topic);
  const writer = new OutboxWriter(schema, 'relay-crash-fixture');
  await ds.transaction(async (m) => {
    for (let seq = 0; seq < Number(count); seq++) await writer.append(m, event, { intentId: randomUUID(), seq });
  });
  process.stdout.write('COMMITTED\n');
  const transport = new KafkaTransport({ clientId: 'relay-crash-fixture', brokers: (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(','), logger });
  await transport.connect();
  const park = async () => {
    process.stdout.write(`PARKED_${mode.toUpperCase()}_PUBLISH\n`);
    await new Promise(() => undefined);
  };
  const relay = new OutboxRelay({
    schema, dataSource: ds, databaseUrl: url, transport, logger, pollIntervalMs: 60_000,
    hooks: mode === 'before' ? { beforePublish: park } : { afterPublish: park },
  });
  await relay.start();
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e));
  process.exit(1);
});
