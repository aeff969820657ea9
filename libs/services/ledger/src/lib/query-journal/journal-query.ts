/**
 * The finance journal's query language, pure: filters, the stable order (effective time, posting,
 * line), keyset cursors, and CSV lines. The repository turns a filter into SQL; nothing here touches a database.
 */
export interface JournalFilter {
  account?: string;
  ownerId?: string;
  providerId?: string;
  asset?: string;
  intentId?: string;
  kind?: string;
  /** Effective time, inclusive. */
  from?: Date;
  /** Effective time, exclusive. */
  to?: Date;
  /** Entries of calls of this tool (by name) or this agent, as their CallRequested says. */
  tool?: string;
  agentId?: string;
  /** Recorded time (when the ledger learnt of it), inclusive / exclusive. */
  recordedFrom?: Date;
  recordedTo?: Date;
}

/** Where a page ends: the last entry's position in the stable order. */
export interface JournalPosition {
  occurredAt: string;
  postingId: string;
  seq: number;
}

export interface JournalLine {
  occurredAt: string;
  recordedAt: string;
  postingId: string;
  seq: number;
  kind: string;
  intentId: string | null;
  account: string;
  asset: string;
  amountMinor: string;
  /** The same amount as a person reads it, in the asset's decimals: "0.25" of USDC. */
  amount: string;
  /** The call's rail (`wallet`, `x402`, `free`), once payment held it; null for lines of no call. */
  rail: string | null;
  /** A settled call's charge (minor units): the hold at a fixed price, the metered charge otherwise. */
  chargeMinor: string | null;
  /** A metered call's unit, the units charged (null when the report was unusable) and the unit price. */
  unit: string | null;
  units: string | null;
  unitPriceMinor: string | null;
}

export const MAX_PAGE = 500;
export const DEFAULT_PAGE = 100;

export function encodeCursor(p: JournalPosition): string {
  return Buffer.from(JSON.stringify([p.occurredAt, p.postingId, p.seq]), 'utf8').toString('base64url');
}

/** The position a cursor names, or undefined when it is not one this API made. */
export function decodeCursor(cursor: string): JournalPosition | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(v) || v.length !== 3) return undefined;
    const [occurredAt, postingId, seq] = v as unknown[];
    if (typeof occurredAt !== 'string' || Number.isNaN(Date.parse(occurredAt)) || typeof postingId !== 'string' || !Number.isInteger(seq)) return undefined;
    return { occurredAt, postingId, seq: seq as number };
  } catch {
    return undefined;
  }
}

/** The SQL condition and parameters of a filter (and an optional position to start after), numbered from $1. */
export function whereOf(f: JournalFilter, after?: JournalPosition): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const add = (clause: string, value: unknown) => {
    params.push(value);
    clauses.push(clause.replace('?', `$${params.length}`));
  };
  if (f.account !== undefined) add('account = ?', f.account);
  if (f.ownerId !== undefined) add('owner_id = ?', f.ownerId);
  if (f.providerId !== undefined) add('provider_id = ?', f.providerId);
  if (f.asset !== undefined) add('asset = ?', f.asset);
  if (f.intentId !== undefined) add('intent_id = ?', f.intentId);
  if (f.kind !== undefined) add('kind = ?', f.kind);
  if (f.from !== undefined) add('occurred_at >= ?', f.from);
  if (f.to !== undefined) add('occurred_at < ?', f.to);
  if (f.recordedFrom !== undefined) add('recorded_at >= ?', f.recordedFrom);
  if (f.recordedTo !== undefined) add('recorded_at < ?', f.recordedTo);
  const calls = (field: 'toolName' | 'agentId') => `intent_id IN (SELECT intent_id FROM ledger.timeline_entry WHERE type = 'CallRequested' AND payload->>'${field}' = ?)`;
  if (f.tool !== undefined) add(calls('toolName'), f.tool);
  if (f.agentId !== undefined) add(calls('agentId'), f.agentId);
  if (after) {
    params.push(after.occurredAt, after.postingId, after.seq);
    const n = params.length;
    clauses.push(`(occurred_at, posting_id, seq) > ($${n - 2}::timestamptz, $${n - 1}, $${n})`);
  }
  return { sql: clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '', params };
}

export const CSV_COLUMNS = ['occurred_at', 'recorded_at', 'posting_id', 'seq', 'kind', 'intent_id', 'account', 'asset', 'amount_minor', 'amount', 'rail', 'charge_minor', 'unit', 'units', 'unit_price_minor'] as const;

/** One RFC 4180 line: a field with a comma, quote, CR or LF is quoted, quotes doubled; a leading =,+,-,@ is neutralised. */
export function csvLine(fields: readonly (string | number | null)[]): string {
  return `${fields.map((f) => {
    const s = f === null ? '' : String(f);
    // Spreadsheets run a cell starting with these as a formula: prefix it so it stays text (CSV injection).
    const safe = /^[=+@\t\r]/.test(s) || (/^-/.test(s) && !/^-\d+$/.test(s)) ? `'${s}` : s;
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  }).join(',')}\r\n`;
}

export function csvOf(l: JournalLine): string {
  return csvLine([l.occurredAt, l.recordedAt, l.postingId, l.seq, l.kind, l.intentId, l.account, l.asset, l.amountMinor, l.amount, l.rail, l.chargeMinor, l.unit, l.units, l.unitPriceMinor]);
}
