import { column, Params, Table, type RecordScope, type RowOf, type Sql } from '@gatehouse/db';
import { conflict, notFound } from '@gatehouse/errors';
import type { AppMetadataEntry } from '../entities/audit.js';

/**
 * The `groups` table (alias `gp`): rows of an instance, each of at most one tenant. Its columns, declared once:
 * GroupRow, GROUP_COLUMNS, the record spec and the record (apps/identity common/named-records.ts) derive from them.
 */
export const groupsTable = new Table({
  name: 'groups',
  alias: 'gp',
  tenantScoped: true,
  columns: {
    id: column.uuid(),
    instance_id: column.uuid(),
    tenant_id: column.uuid().nullable(),
    group_name: column.text(),
    group_description: column.text().nullable(),
    app_metadata: column.json<AppMetadataEntry[]>(),
    created_by: column.uuid().nullable(),
    created_at: column.timestamp(),
    updated_by: column.uuid().nullable(),
    updated_at: column.timestamp(),
  },
});

/** A groups row as GROUP_COLUMNS reads it (timestamps as ISO text). */
export type GroupRow = RowOf<typeof groupsTable.columns>;

export type GroupRowWithCounts = GroupRow & {
  agg_members?: number;
  agg_roles?: number;
  agg_groups?: number;
  agg_parents?: number;
};

export const GROUP_COLUMNS = groupsTable.select;

/** The counts of a group's `aggregations` (alias `gp`). */
export const GROUP_AGGREGATION_COLUMNS = `(SELECT count(*) FROM group_members x WHERE x.group_id = gp.id)::int AS agg_members,
  (SELECT count(*) FROM group_roles x WHERE x.group_id = gp.id)::int AS agg_roles,
  (SELECT count(*) FROM group_children x WHERE x.parent_id = gp.id)::int AS agg_groups,
  (SELECT count(*) FROM group_children x WHERE x.child_id = gp.id)::int AS agg_parents`;

/** The group `id` in the caller's scope, or 404. `lock` holds a row lock until the transaction ends. */
export async function findGroup(
  db: Sql,
  scope: RecordScope,
  id: string,
  opts: { lock?: boolean; aggregations?: boolean } = {},
): Promise<GroupRowWithCounts> {
  const p = new Params([id]);
  const [row] = await db.rows<GroupRowWithCounts>(
    `SELECT ${GROUP_COLUMNS}${opts.aggregations ? `, ${GROUP_AGGREGATION_COLUMNS}` : ''}
       FROM ${groupsTable.from}
      WHERE gp.id = $1 AND ${groupsTable.where(scope, p)}${opts.lock ? ' FOR UPDATE OF gp' : ''}`,
    p.values,
  );
  if (!row) throw notFound(`Group ${id} not found`);
  return row;
}

/** The groups among `ids` in the caller's scope; 404 naming those that are not. */
export async function findGroups(db: Sql, scope: RecordScope, ids: string[]): Promise<GroupRow[]> {
  const p = new Params([ids]);
  const found = await db.rows<GroupRow>(
    `SELECT ${GROUP_COLUMNS} FROM ${groupsTable.from} WHERE gp.id = ANY($1::uuid[]) AND ${groupsTable.where(scope, p)}`,
    p.values,
  );
  const missing = ids.filter((id) => !found.some((g) => g.id === id));
  if (missing.length)
    throw notFound(`Group${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')}`);
  return found;
}

/*
 * Nesting. group_closure holds, for every pair (ancestor, descendant) with a nesting path between them (and every
 * group with itself), the number of distinct paths. Adding the edge parent -> child adds, for every ancestor a of
 * the parent and every descendant d of the child, paths(a, parent) * paths(child, d) to paths(a, d); removing it
 * subtracts the same, and a pair left with no path goes. So a group reached along two paths stays an ancestor when
 * one of them is cut, and a user's groups and all their ancestors are one indexed join, whatever the depth.
 * Changes to the nesting of an instance are serialized (a transaction-scoped advisory lock), so two concurrent
 * nestings cannot close a cycle that neither sees.
 */

/** Serializes nesting changes of an instance until the transaction ends. */
export async function lockNesting(tx: Sql, instanceId: string): Promise<void> {
  await tx.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`gatehouse:groups:${instanceId}`]);
}

/** A new group's own ancestry row. */
export async function addGroupToClosure(tx: Sql, group: { id: string; instance_id: string }): Promise<void> {
  await tx.exec(
    `INSERT INTO group_closure (descendant_id, ancestor_id, instance_id, paths) VALUES ($1, $1, $2, 1)`,
    [group.id, group.instance_id],
  );
}

/**
 * Nests `child` in `parent` (under lockNesting). 409 when that would close a cycle (the child is the parent or one
 * of its ancestors). Returns false when the nesting already existed (nothing changes).
 */
export async function nestGroup(
  tx: Sql,
  parent: { id: string; instance_id: string },
  child: { id: string },
  actor: string | null,
): Promise<boolean> {
  if (parent.id === child.id) throw conflict(`Group ${child.id} cannot be nested in itself`);
  const cycle = await tx.one(`SELECT 1 FROM group_closure WHERE descendant_id = $1 AND ancestor_id = $2`, [
    parent.id,
    child.id,
  ]);
  if (cycle) throw conflict(`Nesting group ${child.id} in ${parent.id} would make a cycle`);
  const inserted = await tx.exec(
    `INSERT INTO group_children (instance_id, parent_id, child_id, created_by, updated_by)
     VALUES ($1, $2, $3, $4, $4) ON CONFLICT (parent_id, child_id) DO NOTHING`,
    [parent.instance_id, parent.id, child.id, actor],
  );
  if (!inserted) return false;
  await tx.exec(
    `INSERT INTO group_closure (descendant_id, ancestor_id, instance_id, paths)
     SELECT d.descendant_id, a.ancestor_id, $3, sum(a.paths * d.paths)::bigint
       FROM group_closure a, group_closure d
      WHERE a.descendant_id = $1 AND d.ancestor_id = $2
      GROUP BY d.descendant_id, a.ancestor_id
     ON CONFLICT (descendant_id, ancestor_id) DO UPDATE SET paths = group_closure.paths + EXCLUDED.paths`,
    [parent.id, child.id, parent.instance_id],
  );
  return true;
}

/** Un-nests `childId` from `parentId` (under lockNesting). Returns false when they were not nested. */
export async function unnestGroup(tx: Sql, parentId: string, childId: string): Promise<boolean> {
  const removed = await tx.exec(`DELETE FROM group_children WHERE parent_id = $1 AND child_id = $2`, [
    parentId,
    childId,
  ]);
  if (!removed) return false;
  const changed = await tx.rows<{ descendant_id: string; ancestor_id: string }>(
    `UPDATE group_closure g SET paths = g.paths - x.n
       FROM (SELECT d.descendant_id, a.ancestor_id, sum(a.paths * d.paths)::bigint AS n
               FROM group_closure a, group_closure d
              WHERE a.descendant_id = $1 AND d.ancestor_id = $2
              GROUP BY d.descendant_id, a.ancestor_id) x
      WHERE g.descendant_id = x.descendant_id AND g.ancestor_id = x.ancestor_id
      RETURNING g.descendant_id, g.ancestor_id, g.paths`,
    [parentId, childId],
  );
  if (changed.length) {
    await tx.exec(
      `DELETE FROM group_closure WHERE paths <= 0 AND descendant_id = ANY($1::uuid[]) AND ancestor_id = ANY($2::uuid[])`,
      [[...new Set(changed.map((c) => c.descendant_id))], [...new Set(changed.map((c) => c.ancestor_id))]],
    );
  }
  return true;
}

/** Takes a group out of every nesting (before it is deleted), under lockNesting. */
export async function detachGroup(tx: Sql, groupId: string): Promise<void> {
  const edges = await tx.rows<{ parent_id: string; child_id: string }>(
    `SELECT parent_id, child_id FROM group_children WHERE parent_id = $1 OR child_id = $1`,
    [groupId],
  );
  for (const e of edges) await unnestGroup(tx, e.parent_id, e.child_id);
}
