/**
 * The tables whose writes the change channel announces, and what a write to each announces: `client` / `user` with
 * the column naming the id, or `all`. `ignore`: columns whose change alone announces nothing (written on every
 * login; no cache keeps them).
 *
 * The triggers of these tables are the only announcer (identity migration 1790000700000 created them, one per
 * event, statement-level with transition tables): every write counts, whoever makes it (the identity API, the
 * token server, a manual SQL statement), in the writing transaction, and nothing else sends a change. A table a
 * cache comes to depend on is added here AND by a new migration creating its triggers (the migrations keep the
 * list as it was when they ran); apps/identity/test/watched-tables.spec.ts checks that the migrated schema
 * announces exactly this list.
 *
 * Besides these, `oidc_payloads` announces `user:<accountId>` when a grant is updated or deleted before its expiry
 * (a row trigger whose condition is false for every other model and for expired grants, which no cache serves).
 */
export interface WatchedTable {
  table: string;
  kind: 'client' | 'user' | 'all';
  column?: string;
  ignore?: readonly string[];
}

export const WATCHED_TABLES: readonly WatchedTable[] = [
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
  {
    // the MFA state of a sign-in (migration 1795900300000); the columns each use of a factor writes announce nothing
    table: 'user_authenticators',
    kind: 'user',
    column: 'user_id',
    ignore: ['last_used_at', 'last_step', 'code_hashes', 'sign_count', 'updated_at', 'updated_by'],
  },
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

/** Over this many distinct ids in one statement, a trigger announces `all` instead. */
export const ANNOUNCE_MAX_IDS = 100;

/** The name of the trigger announcing one event (`ins`, `upd`, `del`) of a watched table. */
export function announceTriggerName(table: string, event: 'ins' | 'upd' | 'del'): string {
  return `tr_${table}_changes_${event}`;
}
