/**
 * The event topics keep their events (retention forever by default, configurable), so a new
 * consumer or a replay can start from offset 0; a topic created earlier gets the retention in force without losing its
 * other settings. Real Kafka broker, the real ops script.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { Topics } from '@tollgate/contracts';
import { uniqueName, waitFor, WORKSPACE_ROOT } from '@tollgate/testing';

jest.setTimeout(120_000);

const brokers = (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(',');

describe('create-topics: retention of the event topics', () => {
  const prefix = `${uniqueName('ret').replace(/_/g, '-')}.`;
  const admin = new Kafka({ clientId: 'test', brokers, logLevel: logLevel.NOTHING }).admin();
  const run = (env: Record<string, string>) => promisify(execFile)(process.execPath, ['-r', '@swc-node/register', 'tools/ops/src/create-topics.ts'], { cwd: WORKSPACE_ROOT, env: { ...process.env, KAFKA_BROKERS: brokers.join(','), KAFKA_TOPIC_PREFIX: prefix, ...env } });
  const config = async (topic: string) => {
    const r = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: prefix + topic }] });
    return Object.fromEntries(r.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]));
  };

  beforeAll(() => admin.connect());
  afterAll(async () => {
    const mine = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    await admin.deleteTopics({ topics: mine }).catch(() => undefined);
    await admin.disconnect();
  });

  it('creates the event topics with retention forever, the catalog compacted', async () => {
    await run({});
    expect(await config(Topics.callRequested)).toMatchObject({ 'retention.ms': '-1', 'cleanup.policy': 'delete', 'max.message.bytes': '4194304' });
    expect(await config(Topics.catalogTool)).toMatchObject({ 'cleanup.policy': 'compact' });
    // Progress notices are not facts: nobody replays them, an hour is kept.
    expect(await config(Topics.callProgressed)).toMatchObject({ 'retention.ms': '3600000', 'cleanup.policy': 'delete' });
  });

  it('applies a configured retention to topics created earlier, keeping their other settings', async () => {
    await run({ KAFKA_TOPIC_RETENTION_MS: '604800000' });
    // The broker applies an altered config through its metadata log: a read right after may still see the old one.
    await waitFor('the new retention in the topic\'s config', async () => (await config(Topics.callRequested))['retention.ms'] === '604800000', 10_000, 200);
    expect(await config(Topics.callRequested)).toMatchObject({ 'retention.ms': '604800000', 'cleanup.policy': 'delete', 'max.message.bytes': '4194304' });
    expect(await config(Topics.callProgressed)).toMatchObject({ 'retention.ms': '3600000' });
    await expect(run({ KAFKA_TOPIC_RETENTION_MS: 'a week' })).rejects.toThrow();
  });
});
