import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `cache_subscribers.backend_pid`: the server process id (`pg_backend_pid()`) of the subscriber's LISTEN connection,
 * written on each (re)connect. Once that backend is gone from `pg_stat_activity`, the subscriber can never
 * acknowledge a settle marker sent to it, and it stopped trusting its cache when it lost the connection: a settle
 * stops waiting for it at once instead of after the settle timeout (libs/shared/changes settle.ts).
 * Nullable: a row written by a subscriber that does not record it (during a rolling upgrade) keeps the heartbeat rule.
 */
export class CacheSubscriberBackends1795706191083 implements MigrationInterface {
  name = 'CacheSubscriberBackends1795706191083';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE cache_subscribers ADD COLUMN backend_pid integer`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE cache_subscribers DROP COLUMN backend_pid`);
  }
}
