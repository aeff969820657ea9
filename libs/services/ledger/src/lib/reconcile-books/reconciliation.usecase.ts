import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { TERMINAL_EVENT_TYPES } from '@tollgate/call-life';
import { LEDGER } from '../ledger.constants';
import { type AccountLine, type BookBalance, compareBooks } from './compare-books';

const SERVICES = ['gateway', 'execution', 'payment', 'settlement', 'ledger'] as const;
const LIMIT = 500;

export interface ReconciliationReport {
  generatedAt: string;
  /** Payment's book vs settlement's book vs the journal, account by account (all lines, mismatches first). */
  accounts: { lines: AccountLine[]; mismatches: number; available: boolean };
  /** Calls whose first event is older than `olderThanSeconds` and which reached no terminal event. */
  callsNotTerminal: { olderThanSeconds: number; calls: { intentId: string; startedAt: string; lastType: string; lastAt: string; operationKey: string | null }[] };
  /** Execution's open reconciliations: dispatched, result unknown, awaiting a decision or the automatic check. */
  unknownOutcomes: { available: boolean; open: { intentId: string; attempt: number; reason: string; tries: number; openedAt: string }[] };
  /** Events a consumer parked (dead letters) not yet re-driven, per service. */
  parkedEvents: { service: string; consumer: string; topic: string; partition: number; offset: string; eventId: string | null; reason: string; parkedAt: string }[];
}

/**
 * The reconciliation report. The other books are read from their services' schemas, read-only, in one
 * repeatable-read snapshot (every service keeps its schema in the one PostgreSQL database, as `tollgate-ops migrate`
 * sets up); a schema this database does not hold is reported `available: false`, never guessed. In-flight events make
 * a mismatch for the moment between a service's commit and the ledger's consumption: compare twice before acting.
 */
@Injectable()
export class ReconciliationUseCase {
  constructor(@InjectDataSource(LEDGER) private readonly ds: DataSource) {}

  async report(olderThanSeconds: number): Promise<ReconciliationReport> {
    return this.ds.transaction('REPEATABLE READ', async (m) => {
      const schemas = new Set<string>((await m.query(`SELECT nspname FROM pg_namespace`)).map((r: { nspname: string }) => r.nspname));
      const book = async (schema: string): Promise<BookBalance[]> => (schemas.has(schema)
        ? m.query(`SELECT account, asset, balance::text AS balance FROM "${schema}".balance`) : []);
      const journal: BookBalance[] = await m.query('SELECT account, asset, sum(amount)::text AS balance FROM ledger.journal_entry GROUP BY 1, 2');
      const lines = compareBooks(await book('payment'), await book('settlement'), journal);
      lines.sort((a, b) => Number(a.status === 'matched') - Number(b.status === 'matched'));
      return {
        generatedAt: new Date().toISOString(),
        accounts: { lines, mismatches: lines.filter((l) => l.status === 'mismatch').length, available: schemas.has('payment') && schemas.has('settlement') },
        callsNotTerminal: { olderThanSeconds, calls: await this.callsNotTerminal(m, olderThanSeconds) },
        unknownOutcomes: { available: schemas.has('execution'), open: schemas.has('execution') ? await m.query(
          `SELECT intent_id AS "intentId", attempt, reason, tries, opened_at AS "openedAt" FROM execution.reconciliation WHERE status = 'open' ORDER BY opened_at LIMIT ${LIMIT}`) : [] },
        parkedEvents: (await Promise.all(SERVICES.filter((s) => schemas.has(s)).map((s) => m.query(
          `SELECT $1::text AS service, consumer, topic, partition, "offset", event_id AS "eventId", reason, parked_at AS "parkedAt"
             FROM "${s}".parked_event WHERE resolved_at IS NULL ORDER BY parked_at LIMIT ${LIMIT}`, [s])))).flat(),
      };
    });
  }

  private callsNotTerminal(m: { query(sql: string, p?: unknown[]): Promise<never[]> }, olderThanSeconds: number) {
    return m.query(
      `SELECT intent_id AS "intentId", min(occurred_at) AS "startedAt", (array_agg(type ORDER BY occurred_at DESC, recorded_at DESC))[1] AS "lastType",
              max(occurred_at) AS "lastAt", max(payload->>'operationKey') AS "operationKey"
         FROM ledger.timeline_entry GROUP BY intent_id
        HAVING bool_and(type <> ALL($1::text[])) AND min(occurred_at) < now() - make_interval(secs => $2)
        ORDER BY min(occurred_at) LIMIT ${LIMIT}`, [TERMINAL_EVENT_TYPES, olderThanSeconds]);
  }
}
