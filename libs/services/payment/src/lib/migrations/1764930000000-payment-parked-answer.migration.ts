import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { addParkedAnswerV4, dropParkedAnswerV4 } from '@tollgate/messaging';

/** A parked event's final answer is given after the park commits, on its own (messaging tables version 4). */
export class PaymentParkedAnswer1764930000000 implements MigrationInterface {
  name = 'PaymentParkedAnswer1764930000000';

  async up(q: QueryRunner): Promise<void> {
    await addParkedAnswerV4(q, 'payment');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropParkedAnswerV4(q, 'payment');
  }
}
