import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A call_tool request waiting in one gateway replica is woken when any replica records its call's
 * outcome. A trigger sends the NOTIFY (delivered at commit), so recording an outcome costs no extra statement.
 */
export class GatewayCallOutcomeNotify1764780000000 implements MigrationInterface {
  name = 'GatewayCallOutcomeNotify1764780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION gateway.notify_call_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('tollgate_call_changed', NEW.intent_id::text);
        RETURN NULL;
      END $$`);
    await q.query('CREATE TRIGGER call_changed AFTER UPDATE ON gateway.call FOR EACH ROW EXECUTE FUNCTION gateway.notify_call_changed()');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER call_changed ON gateway.call');
    await q.query('DROP FUNCTION gateway.notify_call_changed()');
  }
}
