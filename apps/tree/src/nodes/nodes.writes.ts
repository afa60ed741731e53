import { Db, Params, type Sql } from '@gatehouse/db';
import { conflict, notFound } from '@gatehouse/errors';
import type { ReadQuery } from '@gatehouse/query';
import type { Actor } from '../common/actor.js';
import type { Language } from '../common/language.js';
import { resolveAndLockVersion, resolveVersion, type VersionScope } from '../common/scope.js';
import type { InstanceKey } from '../common/instance.js';
import { uniqueConflict } from '../common/tree-db.js';
import type { CloneNodeDto, CreateNodeDto, UpdateNodeDto } from './dto/node.dto.js';
import { toNodeRecord, type NodeRecord, type NodeRow } from './node.record.js';
import { decodePath, encodePath, isInSubtree, LABEL_BYTES, pathLength, subtreeEnd } from './paths.js';
import {
  NODE_CONFLICTS,
  functionError,
  type StructRow,
  refreshLeaf,
  allocateLabels,
  parentFor,
  struct,
  freeCopySuffix,
  readNodeRecord,
} from './nodes.queries.js';

const LAST_ROOT =
  'A tree version keeps at least one root node: this is its last one (add another root first, or delete the version)';

/** Whether the version has a root other than `nodeId` (the caller holds the version lock). */
async function otherRoot(sql: Sql, scope: VersionScope, nodeId: string): Promise<boolean> {
  const row = await sql.one(
    `SELECT 1 FROM tree_nodes WHERE tree_version_id = $1 AND depth = 0 AND id <> $2 LIMIT 1`,
    [scope.versionId, nodeId],
  );
  return row !== undefined;
}

/**
 * Tree nodes: every rule about parents, depth, leaf flags, moves, deletes and clones lives here.
 *
 * Concurrency: every structural write (create, move, delete, clone) first locks the version row (`lockVersion`, or
 * the label allocation UPDATE, which takes the same lock); they are serialized per version. Each statement after the
 * lock gets a fresh READ COMMITTED snapshot, so the parent and cycle checks see every earlier move. Plain attribute
 * updates (name, code, ...) take only the node's row lock.
 */
export class NodeWrites {
  constructor(private readonly db: Db) {}

  async create(
    instance: InstanceKey,
    treeCode: string,
    version: string,
    dto: CreateNodeDto,
    actor: Actor,
    read: ReadQuery,
  ): Promise<NodeRecord> {
    // One round trip: tree_create_node (migration 1790000200000, by instance since 1790000500000) locks the version,
    // hands out the label, checks the parent in a snapshot taken after the lock and inserts; see there. A named
    // prepared statement (`read` prepares any statement, though this one writes): parsing and planning the call
    // again each time was about a tenth of its database CPU.
    const [row] = await this.db
      .connection((sql) =>
        sql.read<NodeRow>(`SELECT * FROM tree_create_node($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
          instance,
          treeCode,
          version,
          dto.code,
          dto.name,
          dto.description ?? null,
          dto.metadata ?? {},
          dto.parent_id ?? null,
          actor.id,
        ]),
      )
      .catch((err: unknown) => {
        throw functionError(err) ?? uniqueConflict(err, NODE_CONFLICTS);
      });
    const scope: VersionScope = { treeId: row!.tree_id, treeCode, versionId: row!.tree_version_id, version };
    // A new node has no children and no translations: the inserted row is the whole record.
    return toNodeRecord({ ...row!, child_count: 0 }, scope, read.expand ? [] : undefined);
  }

  async update(
    instance: InstanceKey,
    treeCode: string,
    version: string,
    nodeId: string,
    dto: UpdateNodeDto,
    actor: Actor,
    read: ReadQuery,
    lang?: Language,
  ): Promise<NodeRecord> {
    return this.db.transaction(async (sql) => {
      const moving = dto.parent_id !== undefined;
      const scope = moving
        ? await resolveAndLockVersion(sql, instance, treeCode, version)
        : await resolveVersion(sql, instance, treeCode, version);
      let moved = false;
      if (moving) {
        const node = await struct(sql, scope, nodeId);
        if ((dto.parent_id ?? null) !== node.parent_id) {
          await this.move(sql, scope, node, dto.parent_id ?? null, actor.id);
          moved = true;
        }
      }
      const attributes = ['code', 'name', 'description', 'metadata', 'enabled'] as const;
      if (moved && attributes.every((a) => dto[a] === undefined)) {
        // The move already set updated_by and updated_at of the node: no second row version of it.
        return await readNodeRecord(sql, scope, nodeId, lang, read.expand);
      }
      const sets: string[] = [];
      const p = new Params();
      const set = (column: string, value: unknown) => sets.push(`${column} = ${p.add(value)}`);
      if (dto.code !== undefined) set('code', dto.code);
      if (dto.name !== undefined) set('name', dto.name);
      if (dto.description !== undefined) set('description', dto.description);
      if (dto.metadata !== undefined) set('metadata', dto.metadata ?? {});
      if (dto.enabled !== undefined) set('enabled', dto.enabled);
      set('updated_by', actor.id);
      const n = await sql
        .exec(
          `UPDATE tree_nodes SET ${sets.join(', ')}, updated_at = now()
            WHERE id = ${p.add(nodeId)} AND tree_version_id = ${p.add(scope.versionId)}`,
          p.values,
        )
        .catch((err: unknown) => {
          throw uniqueConflict(err, NODE_CONFLICTS);
        });
      if (n === 0) throw notFound(`Node ${nodeId} not found in version '${version}'`);
      return await readNodeRecord(sql, scope, nodeId, lang, read.expand);
    });
  }

  /**
   * Deletes a node; one with children is 409 unless `cascade`, which deletes the whole subtree. The version's last
   * root is 409 either way (document 3: a version contains at least one root node).
   */
  async remove(
    instance: InstanceKey,
    treeCode: string,
    version: string,
    nodeId: string,
    cascade: boolean,
  ): Promise<void> {
    await this.db.transaction(async (sql) => {
      const scope = await resolveAndLockVersion(sql, instance, treeCode, version);
      const node = await struct(sql, scope, nodeId);
      if (node.parent_id === null && !(await otherRoot(sql, scope, node.id))) {
        throw conflict(LAST_ROOT);
      }
      if (!node.leaf && !cascade) {
        throw conflict('The node has children; delete them first or pass cascade=true to delete the subtree');
      }
      const range = [scope.versionId, node.path, subtreeEnd(node.path)];
      await sql.exec(
        `DELETE FROM tree_node_translations t USING tree_nodes n
          WHERE t.tree_node_id = n.id AND n.tree_version_id = $1 AND n.path >= $2 AND n.path < $3`,
        range,
      );
      const deleted = await sql.exec(
        `DELETE FROM tree_nodes WHERE tree_version_id = $1 AND path >= $2 AND path < $3`,
        range,
      );
      await sql.exec(`UPDATE tree_versions SET node_count = node_count - $2 WHERE id = $1`, [
        scope.versionId,
        deleted,
      ]);
      if (node.parent_id) await refreshLeaf(sql, scope.versionId, [node.parent_id]);
    });
  }

  /**
   * Copies a node under `dto.parent_id` (default: beside the original). With `deep` the whole subtree is copied;
   * the copy's root takes `dto.code`, every other copied node the code `<original code>-copy-<n>`, n being the
   * smallest positive integer for which none of these codes exists in the version yet. Translations are copied.
   */
  async clone(
    instance: InstanceKey,
    treeCode: string,
    version: string,
    nodeId: string,
    dto: CloneNodeDto,
    deep: boolean,
    actor: Actor,
    read: ReadQuery,
    lang?: Language,
  ): Promise<NodeRecord> {
    return this.db.transaction(async (sql) => {
      const scope = await resolveAndLockVersion(sql, instance, treeCode, version);
      const source = await struct(sql, scope, nodeId);
      const parentId = dto.parent_id === undefined ? source.parent_id : dto.parent_id;
      const parent = parentId ? await parentFor(sql, scope, parentId) : undefined;
      const from = source.path;
      const to = deep ? subtreeEnd(source.path) : Buffer.concat([source.path, encodePath([0])]);
      const count = deep
        ? Number(
            (await sql.one<{ n: number }>(
              `SELECT count(*)::int AS n FROM tree_nodes WHERE tree_version_id = $1 AND path >= $2 AND path < $3`,
              [scope.versionId, from, to],
            ))!.n,
          )
        : 1;
      const suffix = count > 1 ? await freeCopySuffix(sql, scope, from, to, dto.code) : '';
      const [base] = await allocateLabels(sql, scope.versionId, count);
      const prefix = parent ? decodePath(parent.path) : [];
      const k = pathLength(source.path); // 1-based position of the source's own label in every copied path
      // One statement, one snapshot: s = the rows to copy in depth-first order (rank rn), m = old label -> new label,
      // np = each copy's path below the new parent (its labels mapped through m), then nodes and their translations.
      await sql
        .exec(
          `WITH s AS (
             SELECT n.*, tree_path_labels(n.path) AS labels, (row_number() OVER (ORDER BY n.path) - 1)::int AS rn
               FROM tree_nodes n WHERE n.tree_version_id = $1 AND n.path >= $2 AND n.path < $3),
           m AS (SELECT s.labels[cardinality(s.labels)] AS old_label, $4::int + s.rn AS new_label FROM s),
           np AS (
             SELECT s.id, array_agg(m.new_label ORDER BY u.ord) AS suffix
               FROM s CROSS JOIN LATERAL unnest(s.labels[$13:]) WITH ORDINALITY AS u(label, ord)
               JOIN m ON m.old_label = u.label
              GROUP BY s.id),
           copied AS (
             INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, description, metadata, depth, leaf,
                                     parent_id, path, enabled, created_by, updated_by)
             SELECT tree_node_id($1, $4::int + s.rn), s.tree_id, s.tree_version_id,
                    CASE WHEN s.rn = 0 THEN $5 ELSE s.code || $6 END,
                    CASE WHEN s.rn = 0 THEN $7 ELSE s.name END,
                    CASE WHEN s.rn = 0 AND $8::boolean THEN $9 ELSE s.description END,
                    CASE WHEN s.rn = 0 AND $10::boolean THEN $11::jsonb ELSE s.metadata END,
                    cardinality($12::int[]) + cardinality(np.suffix) - 1,
                    CASE WHEN s.rn = 0 AND NOT $14::boolean THEN true ELSE s.leaf END,
                    CASE WHEN s.rn = 0 THEN $15::uuid ELSE tree_node_id($1, np.suffix[cardinality(np.suffix) - 1]) END,
                    tree_path($12::int[] || np.suffix),
                    s.enabled, $16, $16
               FROM s JOIN np ON np.id = s.id
             RETURNING 1)
           INSERT INTO tree_node_translations (tree_version_id, tree_node_id, language, name, description, created_by, updated_by)
           SELECT $1, tree_node_id($1, $4::int + s.rn), t.language, t.name, t.description, $16, $16
             FROM s JOIN tree_node_translations t ON t.tree_node_id = s.id`,
          [
            scope.versionId,
            from,
            to,
            base,
            dto.code,
            suffix,
            dto.name,
            dto.description !== undefined,
            dto.description ?? null,
            dto.metadata !== undefined,
            dto.metadata ?? {},
            prefix,
            k,
            deep,
            parent?.id ?? null,
            actor.id,
          ],
        )
        .catch((err: unknown) => {
          throw uniqueConflict(err, NODE_CONFLICTS);
        });
      if (parent?.leaf) {
        await sql.exec(`UPDATE tree_nodes SET leaf = false WHERE tree_version_id = $1 AND id = $2`, [
          scope.versionId,
          parent.id,
        ]);
      }
      const created = await sql.one<{ id: string }>(`SELECT tree_node_id($1, $2) AS id`, [
        scope.versionId,
        base,
      ]);
      return await readNodeRecord(sql, scope, created!.id, lang, read.expand);
    });
  }

  /**
   * Moves `node` with its subtree under `newParentId` (null: a root) in one set-based UPDATE of the path prefix,
   * which also sets the node's updated_by and updated_at. The version's last root stays a root (409). Runs under the
   * version lock taken by the caller.
   */
  private async move(
    sql: Sql,
    scope: VersionScope,
    node: StructRow,
    newParentId: string | null,
    actorId: string | null,
  ): Promise<void> {
    const parent = newParentId ? await parentFor(sql, scope, newParentId) : undefined;
    if (parent?.id === node.id) throw conflict('A node cannot be its own parent');
    if (parent && node.parent_id === null && !(await otherRoot(sql, scope, node.id))) {
      throw conflict(LAST_ROOT);
    }
    if (parent && isInSubtree(parent.path, node.path)) {
      throw conflict('Cannot move a node under one of its own descendants (that would make a cycle)');
    }
    const prefix = parent?.path ?? Buffer.alloc(0);
    const delta = pathLength(prefix) + 1 - pathLength(node.path);
    await sql.exec(
      `UPDATE tree_nodes
          SET path = $4::bytea || substring(path from $5::int),
              depth = depth + $6,
              parent_id = CASE WHEN id = $7 THEN $8::uuid ELSE parent_id END,
              updated_by = CASE WHEN id = $7 THEN $9::uuid ELSE updated_by END,
              updated_at = CASE WHEN id = $7 THEN now() ELSE updated_at END
        WHERE tree_version_id = $1 AND path >= $2 AND path < $3`,
      [
        scope.versionId,
        node.path,
        subtreeEnd(node.path),
        prefix,
        node.path.length - LABEL_BYTES + 1, // 1-based first byte of the node's own label
        delta,
        node.id,
        parent?.id ?? null,
        actorId,
      ],
    );
    // Old parent may have lost its last child, new parent has one now.
    const touched = [node.parent_id, parent?.id].filter((id): id is string => id != null);
    if (touched.length > 0) await refreshLeaf(sql, scope.versionId, touched);
  }
}
