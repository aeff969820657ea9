/**
 * `tollgate-ops inspect`: look at what ops needs to see.
 *   inspect event <eventId>                     the archived event: position, topic, hash, its full envelope
 *   inspect call <intentId | operationKey>      the call's timeline from the ledger (an operation key: operator token)
 *   inspect lag [--brokers LIST|embedded]       consumer lag per group and partition
 *   inspect parked list|redrive …               parked events (the same as `tollgate-ops parked`)
 */
import { Command } from 'commander';
import { Client } from 'pg';
import { eventLogConsumerLag, kafkaConsumerLag } from '@tollgate/messaging';
import { adminFetch, ledgerToken } from './cli-http';
import { print } from './cli-output';
import { parkedCommand } from './parked.command';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEFAULT_DB = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/tollgate';

async function withDb<T>(url: string, fn: (db: Client) => Promise<T>): Promise<T> {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

async function inspectEvent(eventId: string, o: { databaseUrl: string; json?: boolean }) {
  if (!UUID.test(eventId)) throw new Error(`not an event id: ${eventId}`);
  const [row] = await withDb(o.databaseUrl, async (db) => (await db.query(
    `SELECT position::int AS position, topic, type, key, occurred_at AS "occurredAt", archived_at AS "archivedAt", hash, prev_hash AS "prevHash", event_text AS "eventText"
       FROM ledger.event_archive WHERE event_id = $1`, [eventId])).rows);
  if (!row) {
    process.stdout.write(`no archived event ${eventId}\n`);
    process.exitCode = 1;
    return;
  }
  const { eventText, ...rest } = row as { eventText: string } & Record<string, unknown>;
  const event = { ...rest, envelope: JSON.parse(eventText) };
  print(o.json, event, () => `#${row.position} ${row.type} on ${row.topic} (key ${row.key})\n  occurred ${new Date(row.occurredAt).toISOString()}, archived ${new Date(row.archivedAt).toISOString()}\n  hash ${row.hash}\n${JSON.stringify(event.envelope, null, 2)}`);
}

async function inspectCall(id: string, o: { ledgerUrl: string; token?: string; json?: boolean }) {
  const token = ledgerToken(o.token, undefined);
  let intentId = id;
  if (!UUID.test(id)) {
    const found = await adminFetch(o.ledgerUrl, token, `/calls?operationKey=${encodeURIComponent(id)}`);
    if (!found.ok) throw new Error(`the ledger answered ${found.status}: ${await found.text()}`);
    const { calls } = (await found.json()) as { calls: { intentId: string; agentId: string }[] };
    if (calls.length !== 1) {
      process.stdout.write(`${calls.length} calls have the operation key ${id}${calls.length ? `: ${calls.map((c) => `${c.intentId} (agent ${c.agentId})`).join(', ')}` : ''}\n`);
      process.exitCode = 1;
      return;
    }
    intentId = calls[0]!.intentId;
  }
  const res = await adminFetch(o.ledgerUrl, token, `/calls/${encodeURIComponent(intentId)}`);
  if (!res.ok) {
    process.stdout.write(`${await res.text()}\n`);
    process.exitCode = 1;
    return;
  }
  const call = (await res.json()) as { intentId: string; status: string; contradictions: string[]; timeline: { type: string; producer: string; occurredAt: string }[] };
  print(o.json, call, () => [`call ${call.intentId}: ${call.status}${call.contradictions.length ? ` (contradictions: ${call.contradictions.join(', ')})` : ''}`,
    ...call.timeline.map((t) => `  ${t.occurredAt}  ${t.type.padEnd(18)} ${t.producer}`)].join('\n'));
}

async function inspectLag(o: { brokers?: string; databaseUrl: string; json?: boolean }) {
  if (!o.brokers) throw new Error('--brokers (or KAFKA_BROKERS) is required; "embedded" reads the embedded log');
  const lag = o.brokers === 'embedded' ? await withDb(o.databaseUrl, (db) => eventLogConsumerLag({ query: async (text, params) => (await db.query(text, params)).rows })) : await kafkaConsumerLag(o.brokers.split(','));
  print(o.json, { lag }, () => (lag.length === 0 ? 'no consumer groups' : lag.map((l) => `${l.groupId.padEnd(40)} ${l.topic}[${l.partition}] committed ${l.committed} end ${l.end} lag ${l.lag}`).join('\n')));
}

export function inspectCommand(): Command {
  const inspect = new Command('inspect').description('An event, a call, consumer lag, parked events.');
  inspect.command('event <eventId>').description('an archived event, with its position and hash')
    .option('--database-url <url>', 'the ledger\'s PostgreSQL', DEFAULT_DB).option('--json', 'JSON output')
    .action((eventId: string, o: { databaseUrl: string; json?: boolean }) => inspectEvent(eventId, o));
  inspect.command('call <intentIdOrOperationKey>').description('a call\'s timeline (by intentId, or by operation key with an operator token)')
    .option('--ledger-url <url>', 'the ledger app (or the embedded host)', process.env['LEDGER_URL'] ?? 'http://127.0.0.1:3005')
    .option('--token <token>', 'finance or operator token of the ledger (default: $LEDGER_TOKEN)').option('--json', 'JSON output')
    .action((id: string, o: { ledgerUrl: string; token?: string; json?: boolean }) => inspectCall(id, o));
  inspect.command('lag').description('consumer lag per group and partition')
    .option('--brokers <list>', 'Kafka brokers, or "embedded" for the embedded log', process.env['KAFKA_BROKERS'])
    .option('--database-url <url>', 'the embedded log\'s PostgreSQL', DEFAULT_DB).option('--json', 'JSON output')
    .action((o: { brokers?: string; databaseUrl: string; json?: boolean }) => inspectLag(o));
  inspect.addCommand(parkedCommand());
  return inspect;
}
