import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `ix_events_seq` goes: nothing reads events by `seq` alone (log streams read through `ix_events_txid_seq`, lists
 * through the list indexes), and every index is work on each of the token server's inserts (client_credentials
 * writes an event per token).
 */
export class EventsDropSeqIndex1795800200000 implements MigrationInterface {
  name = 'EventsDropSeqIndex1795800200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS ix_events_seq`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX ix_events_seq ON events (seq)`);
  }
}
