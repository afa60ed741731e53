import type { MigrationInterface, QueryRunner } from 'typeorm';

interface Index {
  name: string;
  columns: string;
  include?: string;
  where?: string;
}

/** The list indexes of `events` as the events migration made them. */
const BEFORE: Index[] = [
  { name: 'ix_events_instance_time', columns: 'instance_id, created_at DESC' },
  { name: 'ix_events_user_time', columns: 'user_id, created_at DESC', where: 'user_id IS NOT NULL' },
  { name: 'ix_events_client_time', columns: 'client_id, created_at DESC', where: 'client_id IS NOT NULL' },
  { name: 'ix_events_type_time', columns: 'instance_id, type, created_at DESC' },
];

/** The same indexes for `GET /logs`, and the tenant's. */
const AFTER: Index[] = [
  { name: 'ix_events_instance_time', columns: 'instance_id, created_at DESC, id DESC' },
  {
    name: 'ix_events_user_time',
    columns: 'user_id, created_at DESC, id DESC',
    include: 'instance_id',
    where: 'user_id IS NOT NULL',
  },
  {
    name: 'ix_events_client_time',
    columns: 'client_id, created_at DESC, id DESC',
    include: 'instance_id',
    where: 'client_id IS NOT NULL',
  },
  { name: 'ix_events_type_time', columns: 'instance_id, type, created_at DESC, id DESC' },
  {
    name: 'ix_events_tenant_time',
    columns: 'instance_id, tenant_id, created_at DESC, id DESC',
    where: 'tenant_id IS NOT NULL',
  },
];

const create = (ix: Index) =>
  `CREATE INDEX ${ix.name} ON events (${ix.columns})${ix.include ? ` INCLUDE (${ix.include})` : ''}` +
  (ix.where ? ` WHERE ${ix.where}` : '');

/**
 * The indexes `GET /logs` reads its pages and counts through (measured over 10,000,000 events, docs/benchmarks.md):
 * - A page is ordered `created_at DESC, id DESC` (the id breaks ties, so paging is stable). With indexes ending at
 *   `created_at`, PostgreSQL 15 sorted every event of the instance for the first page (a parallel sequential scan,
 *   10 s): each list index now ends with `id`, and the page is read in order, a few index entries per partition.
 * - Every list is confined to the instance (and a restricted caller's tenant): the user and client indexes carry
 *   `instance_id` (INCLUDE), so the capped `total_count` is an index-only scan instead of a heap fetch per event.
 * - `ix_events_tenant_time` is new: a caller that is not global lists its tenant's events, which the instance index
 *   would find only by reading past every other tenant's.
 * The events table comes in the same release as this migration, so the rebuild runs on an empty or young table.
 */
export class EventsListIndexes1795800000500 implements MigrationInterface {
  name = 'EventsListIndexes1795800000500';

  async up(q: QueryRunner): Promise<void> {
    for (const { name } of BEFORE) await q.query(`DROP INDEX ${name}`);
    for (const index of AFTER) await q.query(create(index));
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { name } of AFTER) await q.query(`DROP INDEX ${name}`);
    for (const index of BEFORE) await q.query(create(index));
  }
}
