import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The channel of the identity change feed (libs/shared/bearer change-feed.ts names the same). */
const CHANNEL = 'gatehouse_identity_changes';

/**
 * Over this many distinct ids in one statement, a trigger announces `all` instead (a bulk import must not send
 * 10,000 notifications).
 */
const MAX_IDS = 100;

/**
 * `table` -> what a write to it announces: `client` / `user` with the column naming the id, or `all`. `ignore`:
 * columns whose change alone announces nothing (written on every login; no cache keeps them).
 */
const WATCHED: { table: string; kind: 'client' | 'user' | 'all'; column?: string; ignore?: string[] }[] = [
  { table: 'clients', kind: 'client', column: 'id' },
  { table: 'client_resources', kind: 'client', column: 'client_id' },
  { table: 'client_permissions', kind: 'client', column: 'client_id' },
  {
    table: 'users',
    kind: 'user',
    column: 'id',
    ignore: ['last_login_at', 'login_count', 'failed_login_count', 'locked_until'],
  },
  { table: 'user_permissions', kind: 'user', column: 'user_id' },
  { table: 'user_roles', kind: 'user', column: 'user_id' },
  { table: 'group_members', kind: 'user', column: 'user_id' },
  { table: 'roles', kind: 'all' },
  { table: 'role_permissions', kind: 'all' },
  { table: 'groups', kind: 'all' },
  { table: 'group_roles', kind: 'all' },
  { table: 'group_children', kind: 'all' },
  { table: 'group_closure', kind: 'all' },
  { table: 'resources', kind: 'all' },
  { table: 'scopes', kind: 'all' },
  { table: 'tenants', kind: 'all' },
  { table: 'instances', kind: 'all' },
];

const EVENTS = [
  { op: 'INSERT', suffix: 'ins', referencing: 'REFERENCING NEW TABLE AS new_rows' },
  { op: 'UPDATE', suffix: 'upd', referencing: 'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows' },
  { op: 'DELETE', suffix: 'del', referencing: 'REFERENCING OLD TABLE AS old_rows' },
] as const;

/**
 * Exact cache invalidation:
 * - `cache_subscribers`: every process that caches identity rows (the token server) keeps a row here and
 *   heartbeats it; after a change, the identity service waits for each live subscriber to acknowledge that it has
 *   applied the change feed up to that point (libs/shared/bearer cache-sync.ts).
 * - Triggers on every table whose rows the token server caches (and the tables feeding effective user scopes) send
 *   the change feed's notification themselves, so EVERY write counts: the identity API, the token server, a
 *   manual SQL statement. Statement-level with transition tables, one trigger per event: one notification per
 *   distinct id (PostgreSQL also folds identical notifications of one transaction), `all` past 100 ids.
 * - `oidc_payloads`: only a grant updated or deleted before its expiry announces `user:<accountId>` (a row trigger
 *   whose WHEN condition is false for every other model: issuing a token inserts a row and fires nothing; the
 *   housekeeping purge deletes expired rows only and announces nothing).
 */
export class CacheSubscribers1790000700000 implements MigrationInterface {
  name = 'CacheSubscribers1790000700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE cache_subscribers (
        id uuid NOT NULL,
        service text NOT NULL,
        heartbeat_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_cache_subscribers PRIMARY KEY (id)
      )`);
    await q.query(`CREATE INDEX ix_cache_subscribers_heartbeat ON cache_subscribers (heartbeat_at)`);

    // TG_ARGV: kind ('client' | 'user' | 'all'), the id column, the ignored columns (a text[] literal).
    await q.query(`
      CREATE FUNCTION gatehouse_announce_changes() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE
        kind text := TG_ARGV[0];
        col text := TG_ARGV[1];
        ignored text[] := coalesce(TG_ARGV[2], '{}')::text[];
        ids text[];
        changed boolean;
      BEGIN
        IF kind = 'all' THEN
          IF TG_OP = 'DELETE' THEN
            SELECT EXISTS (SELECT 1 FROM old_rows) INTO changed;
          ELSE
            SELECT EXISTS (SELECT 1 FROM new_rows) INTO changed;
          END IF;
          IF changed THEN
            PERFORM pg_notify('${CHANNEL}', 'all');
          END IF;
          RETURN NULL;
        END IF;
        IF TG_OP = 'INSERT' THEN
          EXECUTE format('SELECT array_agg(id) FROM (SELECT DISTINCT lower(%1$I::text) AS id FROM new_rows
                           WHERE %1$I IS NOT NULL LIMIT ${MAX_IDS + 1}) x', col) INTO ids;
        ELSIF TG_OP = 'DELETE' THEN
          EXECUTE format('SELECT array_agg(id) FROM (SELECT DISTINCT lower(%1$I::text) AS id FROM old_rows
                           WHERE %1$I IS NOT NULL LIMIT ${MAX_IDS + 1}) x', col) INTO ids;
        ELSIF cardinality(ignored) > 0 THEN
          -- an update that changed only ignored columns announces nothing (the id column is the key here)
          EXECUTE format('SELECT array_agg(id) FROM (SELECT DISTINCT lower(n.%1$I::text) AS id
                            FROM new_rows n JOIN old_rows o ON o.%1$I = n.%1$I
                           WHERE to_jsonb(n) - $1 IS DISTINCT FROM to_jsonb(o) - $1 LIMIT ${MAX_IDS + 1}) x', col)
            INTO ids USING ignored;
        ELSE
          EXECUTE format('SELECT array_agg(id) FROM (
                            SELECT lower(%1$I::text) AS id FROM new_rows WHERE %1$I IS NOT NULL
                            UNION SELECT lower(%1$I::text) FROM old_rows WHERE %1$I IS NOT NULL
                            LIMIT ${MAX_IDS + 1}) x', col) INTO ids;
        END IF;
        IF ids IS NULL THEN
          RETURN NULL;
        END IF;
        IF cardinality(ids) > ${MAX_IDS} THEN
          PERFORM pg_notify('${CHANNEL}', 'all');
        ELSE
          PERFORM pg_notify('${CHANNEL}', kind || ':' || i) FROM unnest(ids) AS i;
        END IF;
        RETURN NULL;
      END
      $fn$`);
    for (const w of WATCHED) {
      const args = [w.kind, w.column ?? '', `{${(w.ignore ?? []).join(',')}}`]
        .map((a) => `'${a}'`)
        .join(', ');
      for (const e of EVENTS) {
        await q.query(
          `CREATE TRIGGER tr_${w.table}_changes_${e.suffix} AFTER ${e.op} ON ${w.table} ${e.referencing}
             FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_announce_changes(${args})`,
        );
      }
    }

    await q.query(`
      CREATE FUNCTION gatehouse_announce_grant() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF OLD.payload->>'accountId' IS NOT NULL THEN
          PERFORM pg_notify('${CHANNEL}', 'user:' || lower(OLD.payload->>'accountId'));
        END IF;
        RETURN NULL;
      END
      $fn$`);
    await q.query(`
      CREATE TRIGGER tr_oidc_payloads_grant_changes AFTER UPDATE OR DELETE ON oidc_payloads
        FOR EACH ROW WHEN (OLD.model = 'Grant' AND (OLD.expires_at IS NULL OR OLD.expires_at > now()))
        EXECUTE FUNCTION gatehouse_announce_grant()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER tr_oidc_payloads_grant_changes ON oidc_payloads`);
    await q.query(`DROP FUNCTION gatehouse_announce_grant()`);
    for (const w of WATCHED) {
      for (const e of EVENTS) await q.query(`DROP TRIGGER tr_${w.table}_changes_${e.suffix} ON ${w.table}`);
    }
    await q.query(`DROP FUNCTION gatehouse_announce_changes()`);
    await q.query(`DROP TABLE cache_subscribers`);
  }
}
