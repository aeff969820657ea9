/**
 * Ops CLI for parked events (dead letters):
 *   parked list [--service NAME] [--all]          parked events not re-driven yet (--all: resolved ones too)
 *   parked redrive --service NAME [--consumer C] [--offset O]   ask the consumers to apply them again (after a fix)
 * Reads the services' `parked_event` tables on DATABASE_URL (every service has its own schema there). A re-drive is a
 * request: the owning consumer applies the event within a few seconds, and it stays parked with the new reason if it
 * fails again. `npx npm run ops -- parked <command>`.
 */
import { Command } from 'commander';
import { Client } from 'pg';

/** The `parked` subcommand of tollgate-ops. */
export function parkedCommand(): Command {
  const SERVICES = ['gateway', 'execution', 'payment', 'settlement', 'ledger'] as const;

  const program = new Command('parked')
    .description('Events a consumer parked after its handler kept failing, or because they broke their contract.')
    .option('--database-url <url>', 'PostgreSQL holding the services\' schemas', process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/tollgate');

  async function withDb<T>(fn: (db: Client) => Promise<T>): Promise<T> {
    const db = new Client({ connectionString: program.opts<{ databaseUrl: string }>().databaseUrl });
    await db.connect();
    try {
      return await fn(db);
    } finally {
      await db.end();
    }
  }

  /** One service's schema (any schema with a parked_event table: the services', or a test's), or every service's. */
  function servicesOf(service?: string): readonly string[] {
    if (service && !/^[a-z_][a-z0-9_]{0,62}$/.test(service)) throw new Error(`not a service name: ${service}; one of ${SERVICES.join(', ')}`);
    return service ? [service] : SERVICES;
  }

  program.command('list').description('parked events').option('--service <name>').option('--all', 'include re-driven ones')
    .action(async (o: { service?: string; all?: boolean }) => {
      const rows = await withDb(async (db) => (await Promise.all(servicesOf(o.service).map(async (s) => (await db.query(
        `SELECT $1::text AS service, consumer, topic, partition, "offset", event_id AS "eventId", key, reason, parked_at AS "parkedAt",
                redrive_requested_at AS "redriveRequestedAt", resolved_at AS "resolvedAt",
                CASE WHEN NOT answer_due THEN 'none owed' WHEN answered_at IS NOT NULL THEN 'given' WHEN answer_error IS NOT NULL THEN 'failed' ELSE 'due' END AS answer,
                answered_at AS "answeredAt", answer_error AS "answerError"
           FROM "${s}".parked_event ${o.all ? '' : 'WHERE resolved_at IS NULL'} ORDER BY parked_at`, [s],
      )).rows))).flat());
      process.stdout.write(`${JSON.stringify({ parked: rows }, null, 2)}\n`);
    });

  program.command('redrive').description('request a re-drive of parked events').requiredOption('--service <name>').option('--consumer <name>').option('--offset <offset>')
    .action(async (o: { service: string; consumer?: string; offset?: string }) => {
      const [schema] = servicesOf(o.service);
      const n = await withDb(async (db) => (await db.query(
        `UPDATE "${schema}".parked_event SET redrive_requested_at = now()
          WHERE resolved_at IS NULL AND ($1::text IS NULL OR consumer = $1) AND ($2::text IS NULL OR "offset" = $2)`,
        [o.consumer ?? null, o.offset ?? null],
      )).rowCount);
      process.stdout.write(`${JSON.stringify({ service: o.service, requested: n })}\n`);
    });

  return program;
}
