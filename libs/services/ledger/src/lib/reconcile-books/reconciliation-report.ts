import { type AccountLine } from './compare-books';

/** What the reconciliation report shows finance and ops. */
export interface ReconciliationReport {
  generatedAt: string;
  /** Payment's book vs settlement's book vs the journal, account by account (all lines, mismatches first). */
  accounts: { lines: AccountLine[]; mismatches: number; available: boolean };
  /** Calls whose first event is older than `olderThanSeconds` and which reached no terminal event. */
  callsNotTerminal: { olderThanSeconds: number; calls: { intentId: string; startedAt: string; lastType: string; lastAt: string; operationKey: string | null }[] };
  /** Execution's open reconciliations: dispatched, result unknown, awaiting a decision or the automatic check. */
  unknownOutcomes: { available: boolean; open: { intentId: string; attempt: number; reason: string; tries: number; openedAt: string }[] };
  /** Metered calls: charge = min(max(units × unit price, minimum), hold), and the hold resolved once (the newest 10,000). */
  meteredCalls: { checked: number; problems: { intentId: string; problem: string }[] };
  /** Events a consumer parked (dead letters) not yet re-driven, per service. */
  parkedEvents: { service: string; consumer: string; topic: string; partition: number; offset: string; eventId: string | null; reason: string; parkedAt: string }[];
}
