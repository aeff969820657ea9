/**
 * R (nothing blocks other tenants) and G (every wait ends with a final answer), on real PostgreSQL: a park commits on
 * its own, whatever the consumer's answer to it does. The answer (`onParked`) runs after the park in its own
 * transaction, a bounded number of times; one that keeps failing with the very fault the event was parked for is left
 * to ops on the parked row, never holding the topic; a message that broke its contract is answered by the intent it
 * names; an answer a crash interrupted is given when the consumer comes back.
 */
import { randomUUID } from 'node:crypto';
import { createLogger } from '@tollgate/observability';
import { createTestDatabase, uniqueName, waitFor } from '@tollgate/testing';
import { InboxConsumer, on, OutboxWriter, PostgresLogTransport } from '../src';
import { appliedCounts, openProbeDataSource, probeEvent, probeHandler } from './probe.fixture';

jest.setTimeout(120_000);
const logger = createLogger('parked-answer-test', process.env['TEST_LOG_LEVEL'] ?? 'silent');

let db: { url: string; drop(): Promise<void> };
let transport: PostgresLogTransport;
beforeAll(async () => {
  db = await createTestDatabase('tollgate_parkanswer');
  transport = new PostgresLogTransport({ databaseUrl: db.url, logger, pollIntervalMs: 200 });
  await transport.connect();
});
afterAll(async () => {
  await transport.close();
  await db.drop();
});

async function setup(prefix: string) {
  const schema = uniqueName(prefix);
  const ds = await openProbeDataSource(db.url, schema);
  const event = probeEvent(`test.${schema.replace(/_/g, '-')}.recorded.v1`);
  const writer = new OutboxWriter(schema, 'test', transport);
  await ds.query(`CREATE TABLE "${schema}".probe_answer (intent_id uuid PRIMARY KEY, how text NOT NULL)`);
  // The fault: seq 2 cannot be written to probe_applied, by the handler or by anyone.
  await ds.query(`CREATE FUNCTION "${schema}".no_seq_2() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.seq = 2 THEN RAISE EXCEPTION 'test: seq 2 cannot be written'; END IF; RETURN NEW; END $$`);
  await ds.query(`CREATE TRIGGER no_seq_2 BEFORE INSERT ON "${schema}".probe_applied FOR EACH ROW EXECUTE FUNCTION "${schema}".no_seq_2()`);
  const intents = new Map<number, string>();
  const publish = (seqs: number[]) => ds.transaction(async (m) => {
    for (const seq of seqs) {
      intents.set(seq, randomUUID());
      await writer.append(m, event, { intentId: intents.get(seq)!, seq });
    }
  });
  const parkedRows = () => ds.query(`SELECT answer_due, answered_at IS NOT NULL AS answered, answer_error FROM "${schema}".parked_event`) as Promise<{ answer_due: boolean; answered: boolean; answer_error: string | null }[]>;
  const answers = () => ds.query(`SELECT intent_id, how FROM "${schema}".probe_answer ORDER BY how`) as Promise<{ intent_id: string; how: string }[]>;
  return { schema, ds, event, writer, publish, intents, parkedRows, answers, inner: probeHandler(event, schema) };
}

describe('a park and its answer (parking cannot fail with the fault it parks)', () => {
  it('an answer that hits the same fault leaves the park committed, is tried a bounded number of times, and is left to ops; the topic goes on', async () => {
    const p = await setup('samefault');
    let answerTries = 0;
    const consumer = new InboxConsumer({
      name: 'samefault', producer: 'test', schema: p.schema, dataSource: p.ds, transport, logger, maxAttempts: 2, outbox: p.writer,
      handlers: [on(p.event, (ctx) => p.inner.handle(ctx), {
        onParked: async ({ payload, manager }) => {
          answerTries++;
          await manager.query(`INSERT INTO "${p.schema}".probe_applied (seq) VALUES ($1)`, [payload!.seq]);
        },
      })],
    });
    await consumer.start();
    await p.publish([1, 2, 3]);
    await waitFor('the events around the parked one applied', async () => (await appliedCounts(p.ds, p.schema)).rows === 2, 30_000);
    await waitFor('the answer given up on, on the parked row', async () => (await p.parkedRows())[0]?.answer_error != null, 30_000);
    expect(await p.parkedRows()).toEqual([{ answer_due: true, answered: false, answer_error: expect.stringMatching(/^answer failed 3 times: .*seq 2 cannot be written/) }]);
    expect(answerTries).toBe(3);
    await p.publish([4]);
    await waitFor('later events applied too', async () => (await appliedCounts(p.ds, p.schema)).seqs.includes(4), 30_000);
    await consumer.stop();
    await p.ds.destroy();
  });

  it('an answer that can be given is given once, after the park, and recorded on the row', async () => {
    const p = await setup('answered');
    const consumer = new InboxConsumer({
      name: 'answered', producer: 'test', schema: p.schema, dataSource: p.ds, transport, logger, maxAttempts: 2, outbox: p.writer,
      handlers: [on(p.event, (ctx) => p.inner.handle(ctx), {
        onParked: async ({ intentId, manager }) => {
          await manager.query(`INSERT INTO "${p.schema}".probe_answer (intent_id, how) VALUES ($1, 'decoded')`, [intentId]);
        },
      })],
    });
    await consumer.start();
    await p.publish([1, 2]);
    await waitFor('the answer given', async () => (await p.answers()).length === 1, 30_000);
    expect(await p.answers()).toEqual([{ intent_id: p.intents.get(2), how: 'decoded' }]);
    await waitFor('recorded on the parked row', async () => (await p.parkedRows())[0]?.answered === true, 10_000);
    await consumer.stop();
    await p.ds.destroy();
  });

  it('a message that broke its contract is parked and answered by the intent it names', async () => {
    const p = await setup('contract');
    const consumer = new InboxConsumer({
      name: 'contract', producer: 'test', schema: p.schema, dataSource: p.ds, transport, logger, outbox: p.writer,
      handlers: [on(p.event, (ctx) => p.inner.handle(ctx), {
        onParked: async ({ payload, intentId, manager }) => {
          await manager.query(`INSERT INTO "${p.schema}".probe_answer (intent_id, how) VALUES ($1, $2)`, [intentId, payload ? 'decoded' : 'lenient']);
        },
      })],
    });
    const intentId = randomUUID();
    const envelope = { eventId: randomUUID(), type: 'ProbeRecorded', version: 1, key: intentId, occurredAt: new Date().toISOString(), producer: 'test', payload: { intentId, seq: -1 } };
    await consumer.onBatch([{ topic: p.event.topic, key: intentId, value: JSON.stringify(envelope), headers: {}, partition: 0, offset: '1' }]);
    expect(await p.answers()).toEqual([{ intent_id: intentId, how: 'lenient' }]);
    expect(await p.parkedRows()).toEqual([{ answer_due: true, answered: true, answer_error: null }]);
    await p.ds.destroy();
  });

  it('an answer a crash interrupted (parked, not answered) is given when the consumer comes back', async () => {
    const p = await setup('crashed');
    const intentId = randomUUID();
    const envelope = { eventId: randomUUID(), type: 'ProbeRecorded', version: 1, key: intentId, occurredAt: new Date().toISOString(), producer: 'test', payload: { intentId, seq: 7 } };
    await p.ds.query(`INSERT INTO "${p.schema}".parked_event (consumer, topic, partition, "offset", event_id, key, value, reason, answer_due)
                      VALUES ('crashed', $1, 0, '9', $2, $3, $4, 'parked before a crash', true)`, [p.event.topic, envelope.eventId, intentId, JSON.stringify(envelope)]);
    const consumer = new InboxConsumer({
      name: 'crashed', producer: 'test', schema: p.schema, dataSource: p.ds, transport, logger, outbox: p.writer, redriveIntervalMs: 100,
      handlers: [on(p.event, (ctx) => p.inner.handle(ctx), {
        onParked: async ({ intentId: id, manager }) => {
          await manager.query(`INSERT INTO "${p.schema}".probe_answer (intent_id, how) VALUES ($1, 'after the crash')`, [id]);
        },
      })],
    });
    await consumer.start();
    await waitFor('the interrupted answer given', async () => (await p.answers()).length === 1, 10_000);
    expect(await p.answers()).toEqual([{ intent_id: intentId, how: 'after the crash' }]);
    await consumer.stop();
    await p.ds.destroy();
  });
});
