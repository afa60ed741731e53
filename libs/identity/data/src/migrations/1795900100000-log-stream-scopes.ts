import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The holders of a scope: the three permission tables and the column naming the holder. */
const HOLDERS = [
  ['client_permissions', 'client_id'],
  ['role_permissions', 'role_id'],
  ['user_permissions', 'user_id'],
] as const;

/** The management API's system resource of each instance (`urn:gatehouse:management`). */
const MANAGEMENT = `SELECT id FROM resources WHERE is_system AND identifier_url = 'urn:gatehouse:management'`;

/**
 * The log streams' scopes as ../shared/API.md names them: read with `logs:read` (the audit trail's scope), changed
 * with `log_streams:write`. They were `log-streams:read` and `log-streams:write`; nothing granted is lost:
 * - `log-streams:write` is renamed in place, so every client, role and user holding it holds `log_streams:write`;
 * - every holder of `log-streams:read` is given `logs:read` of the same resource (where it exists), then the old
 *   scope goes (its grants with it).
 * Only the system management resource's scopes change; a scope of that name on another resource is someone's own.
 */
export class LogStreamScopes1795900100000 implements MigrationInterface {
  name = 'LogStreamScopes1795900100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE scopes SET scope_name = 'log_streams:write', scope_description = 'Create, modify and delete log streams'
        WHERE scope_name = 'log-streams:write' AND resource_id IN (${MANAGEMENT})`,
    );
    for (const [table, holder] of HOLDERS) {
      await q.query(
        `INSERT INTO ${table} (instance_id, ${holder}, resource_id, scope_id)
         SELECT p.instance_id, p.${holder}, p.resource_id, logs.id
           FROM ${table} p
           JOIN scopes old ON old.id = p.scope_id AND old.scope_name = 'log-streams:read'
           JOIN scopes logs ON logs.resource_id = p.resource_id AND logs.scope_name = 'logs:read'
          WHERE p.resource_id IN (${MANAGEMENT})
         ON CONFLICT (${holder}, scope_id) DO NOTHING`,
      );
    }
    await q.query(
      `DELETE FROM scopes old
        WHERE old.scope_name = 'log-streams:read' AND old.resource_id IN (${MANAGEMENT})
          AND EXISTS (SELECT 1 FROM scopes logs WHERE logs.resource_id = old.resource_id AND logs.scope_name = 'logs:read')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    // The read scope comes back granted to nobody (its holders keep logs:read); the write scope gets its old name.
    await q.query(
      `UPDATE scopes SET scope_name = 'log-streams:write', scope_description = 'Create, modify and delete log-streams'
        WHERE scope_name = 'log_streams:write' AND resource_id IN (${MANAGEMENT})`,
    );
    await q.query(
      `INSERT INTO scopes (instance_id, resource_id, scope_name, scope_description)
       SELECT r.instance_id, r.id, 'log-streams:read', 'Read log-streams' FROM resources r
        WHERE r.id IN (${MANAGEMENT})
          AND NOT EXISTS (SELECT 1 FROM scopes s WHERE s.resource_id = r.id AND s.scope_name = 'log-streams:read')`,
    );
  }
}
