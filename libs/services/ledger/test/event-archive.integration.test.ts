/**
 * On the real PostgreSQL: the ledger's archive appends every consumed event once, in a gapless
 * hash chain, even from concurrent transactions; it refuses updates and deletes; and `verify` finds an event edited or
 * removed behind its back (a superuser disabling the guard), naming the position.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { type EventEnvelope } from '@tollgate/contracts';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { ArchiveEventUseCase } from '../src/lib/archive-events/archive-event.usecase';
import { VerifyArchiveUseCase } from '../src/lib/archive-events/verify-archive.usecase';
import { ledgerDataSourceOptions } from '../src/lib/ledger.datasource-options';

jest.setTimeout(60_000);

const envelope = (i: number): EventEnvelope => ({
  eventId: randomUUID(), type: 'PaymentHeld', version: 1, key: `intent-${i % 7}`, occurredAt: new Date(1_800_000_000_000 + i).toISOString(), producer: 'payment',
  payload: { intentId: `intent-${i % 7}`, amount: { amountMinor: String(100 + i), asset: 'USDC' } },
});

describe('event archive', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  const archive = new ArchiveEventUseCase();
  let verify: VerifyArchiveUseCase;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_archive');
    ds = await openServiceDataSource(ledgerDataSourceOptions(db.url));
    verify = new VerifyArchiveUseCase(ds);
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  it('appends each event once, from concurrent transactions, in a chain that verifies', async () => {
    const events = Array.from({ length: 200 }, (_, i) => envelope(i));
    // Eight transactions at once, each archiving its share — and every event a second time (a redelivery).
    await Promise.all(Array.from({ length: 8 }, (_, t) => ds.transaction(async (m) => {
      for (const e of events.filter((_, i) => i % 8 === t)) {
        await archive.append(m, 'payment.payment.held.v1', e);
        await archive.append(m, 'payment.payment.held.v1', e);
      }
    })));
    expect(await ds.query('SELECT count(*)::int AS n, max(position)::int AS last FROM ledger.event_archive')).toEqual([{ n: 200, last: 200 }]);
    const verdict = await verify.verify();
    expect(verdict).toMatchObject({ ok: true, rows: 200, head: { position: 200 } });
  });

  it('appends a batch at once (two statements), chained after the per-event appends, skipping what is archived', async () => {
    const batch = Array.from({ length: 50 }, (_, i) => ({ topic: 'payment.payment.held.v1', envelope: envelope(1000 + i) }));
    const archivedAlready = (await ds.query('SELECT event_text FROM ledger.event_archive WHERE position = 7'))[0].event_text as string;
    const redelivered = { topic: 'payment.payment.held.v1', envelope: JSON.parse(archivedAlready) as EventEnvelope };
    await Promise.all([0, 1].map((half) => ds.transaction((m) => archive.appendAll(m, [...batch.filter((_, i) => i % 2 === half), redelivered, batch[0]!]))));
    expect(await ds.query('SELECT count(*)::int AS n, max(position)::int AS last FROM ledger.event_archive')).toEqual([{ n: 250, last: 250 }]);
    expect(await verify.verify()).toMatchObject({ ok: true, rows: 250, head: { position: 250 } });
  });

  it('plans the redelivery check on every run: a plan made while the archive was small is never kept', async () => {
    const runner = ds.createQueryRunner();
    try {
      for (let i = 0; i < 6; i++) {
        await runner.startTransaction();
        await archive.appendAll(runner.manager, [{ topic: 'payment.payment.held.v1', envelope: envelope(2000 + i) }]);
        await runner.commitTransaction();
      }
      // The append is prepared on this connection (statements are); the head and redelivery check is not.
      const prepared = (await runner.query(`SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%ledger.event_archive%'`)) as { statement: string }[];
      expect(prepared.some((p) => p.statement.includes('INSERT INTO ledger.event_archive'))).toBe(true);
      expect(prepared.filter((p) => p.statement.includes('event_id = ANY'))).toEqual([]);
    } finally {
      await runner.release();
    }
  });

  it('refuses updates and deletes', async () => {
    await expect(ds.query(`UPDATE ledger.event_archive SET event_text = 'x' WHERE position = 1`)).rejects.toThrow(/append-only/);
    await expect(ds.query('DELETE FROM ledger.event_archive WHERE position = 2')).rejects.toThrow(/append-only/);
  });

  it('finds an event edited or removed behind the guard, at its position', async () => {
    const head = (await verify.verify()).head;
    await ds.query('ALTER TABLE ledger.event_archive DISABLE TRIGGER event_archive_append_only');
    await ds.query(`UPDATE ledger.event_archive SET event_text = regexp_replace(event_text, '"amountMinor":"(\\d+)"', '"amountMinor":"9\\1"') WHERE position = 51`);
    const edited = await verify.verify();
    expect(edited).toMatchObject({ ok: false, rows: 50, problem: { position: 51, kind: 'hash_mismatch' } });
    await ds.query(`UPDATE ledger.event_archive SET event_text = regexp_replace(event_text, '"amountMinor":"9(\\d+)"', '"amountMinor":"\\1"') WHERE position = 51`);
    expect(await verify.verify()).toMatchObject({ ok: true, head });
    await ds.query('DELETE FROM ledger.event_archive WHERE position = 120');
    expect(await verify.verify()).toMatchObject({ ok: false, problem: { position: 121, kind: 'gap', expected: 120 } });
    await ds.query('ALTER TABLE ledger.event_archive ENABLE TRIGGER event_archive_append_only');
  });
});
