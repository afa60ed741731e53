import { notFound } from '@gatehouse/errors';
import type { Sql } from '@gatehouse/db';
import type { InstanceKey } from './instance.js';

/** A tree addressed by its code within the caller's instance (another instance's tree is 404). */
export interface TreeScope {
  treeId: string;
  treeCode: string;
}

/** A tree version addressed by tree code and version code. */
export interface VersionScope extends TreeScope {
  versionId: string;
  version: string;
}

export async function resolveTree(sql: Sql, instance: InstanceKey, treeCode: string): Promise<TreeScope> {
  // Look-ups by key on every request run as prepared statements (Sql.read): no planning per request.
  const [row] = await sql.read<{ id: string }>(`SELECT id FROM trees WHERE instance_id = $1 AND code = $2`, [
    instance,
    treeCode,
  ]);
  if (!row) throw notFound(`Tree '${treeCode}' not found`);
  return { treeId: row.id, treeCode };
}

export async function resolveVersion(
  sql: Sql,
  instance: InstanceKey,
  treeCode: string,
  version: string,
): Promise<VersionScope> {
  const [row] = await sql.read<{ tree_id: string; version_id: string | null }>(
    `SELECT t.id AS tree_id, v.id AS version_id
       FROM trees t LEFT JOIN tree_versions v ON v.tree_id = t.id AND v.version = $3
      WHERE t.instance_id = $1 AND t.code = $2`,
    [instance, treeCode, version],
  );
  if (!row) throw notFound(`Tree '${treeCode}' not found`);
  if (!row.version_id) throw notFound(`Version '${version}' of tree '${treeCode}' not found`);
  return { treeId: row.tree_id, treeCode, versionId: row.version_id, version };
}

/**
 * Locks the version row for a structural write (create, move, delete, clone, import of nodes). Structural writes of
 * one version are serialized by this lock; every statement after it sees all of them committed, so the checks that
 * follow (parent exists, no cycle, has children) cannot be invalidated by a concurrent move. Reads never wait.
 */
export async function lockVersion(sql: Sql, versionId: string, what = 'Version'): Promise<void> {
  const row = await sql.one(`SELECT id FROM tree_versions WHERE id = $1 FOR NO KEY UPDATE`, [versionId]);
  if (!row) throw notFound(`${what} not found`);
}

/**
 * Resolves tree code + version code and locks the version row (see lockVersion) in one statement; 404 as
 * resolveVersion when either is missing.
 */
export async function resolveAndLockVersion(
  sql: Sql,
  instance: InstanceKey,
  treeCode: string,
  version: string,
): Promise<VersionScope> {
  const row = await sql.one<{ id: string; tree_id: string }>(
    `SELECT v.id, v.tree_id FROM trees t JOIN tree_versions v ON v.tree_id = t.id
      WHERE t.instance_id = $1 AND t.code = $2 AND v.version = $3 FOR NO KEY UPDATE OF v`,
    [instance, treeCode, version],
  );
  if (!row) {
    await resolveVersion(sql, instance, treeCode, version); // throws the 404 naming what is missing
    throw notFound(`Version '${version}' of tree '${treeCode}' not found`);
  }
  return { treeId: row.tree_id, treeCode, versionId: row.id, version };
}
