import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { LEDGER } from '../ledger.constants';
import { Books } from './books.repository';
import { type BookBalance, compareBooks } from './compare-books';
import { checkMeteredCalls } from './metered-check';
import { type ReconciliationReport } from './reconciliation-report';

export { type ReconciliationReport } from './reconciliation-report';

const SERVICES = ['gateway', 'execution', 'payment', 'settlement', 'ledger'] as const;
const LIMIT = 500;
/** How many of the newest metered calls each report checks. */
const METERED_CHECKED = 10_000;

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
      const schemas = await Books.schemas(m);
      const book = async (schema: 'payment' | 'settlement'): Promise<BookBalance[]> => (schemas.has(schema) ? Books.balances(m, schema) : []);
      const lines = compareBooks(await book('payment'), await book('settlement'), await Books.journalBalances(m));
      lines.sort((a, b) => Number(a.status === 'matched') - Number(b.status === 'matched'));
      return {
        generatedAt: new Date().toISOString(),
        accounts: { lines, mismatches: lines.filter((l) => l.status === 'mismatch').length, available: schemas.has('payment') && schemas.has('settlement') },
        callsNotTerminal: { olderThanSeconds, calls: await Books.callsNotTerminal(m, olderThanSeconds, LIMIT) },
        unknownOutcomes: { available: schemas.has('execution'), open: schemas.has('execution') ? await Books.openUnknownOutcomes(m, LIMIT) : [] },
        meteredCalls: checkMeteredCalls(await Books.meteredCalls(m, METERED_CHECKED)),
        parkedEvents: (await Promise.all(SERVICES.filter((s) => schemas.has(s)).map((s) => Books.parkedEvents(m, s, LIMIT)))).flat(),
      };
    });
  }
}
