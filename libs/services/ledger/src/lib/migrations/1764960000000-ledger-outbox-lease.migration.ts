import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { addOutboxLeaseV5, dropOutboxLeaseV5 } from '@tollgate/messaging';

/** Outbox rows a writer publishes itself right after its commit are leased to it; the relay takes them when the lease runs out. */
export class LedgerOutboxLease1764960000000 implements MigrationInterface {
  name = 'LedgerOutboxLease1764960000000';

  async up(q: QueryRunner): Promise<void> {
    await addOutboxLeaseV5(q, 'ledger');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropOutboxLeaseV5(q, 'ledger');
  }
}
