import { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { conflict, DomainError, invalidRequest, notFound } from '@gatehouse/errors';
import { findPgError } from '@gatehouse/http';
import {
  limitOffsetClause,
  orderByClause,
  parseListQuery,
  parseReadQuery,
  pickFields,
  takePage,
  toEnvelope,
  type EnvelopeV1,
} from '@gatehouse/query';
import type { Actor } from '../common/actor.js';
import type { Language } from '../common/language.js';
import { resolveAndLockVersion, resolveVersion, type VersionScope } from '../common/scope.js';
import { inTransaction, Params, uniqueConflict, withSql, type Sql } from '../common/sql.js';
import { ChunkWriter } from '../common/stream.js';
import type { CloneNodeDto, CreateNodeDto, UpdateNodeDto } from './dto/node.dto.js';
import {
  nodeColumns,
  nodeJsonWriter,
  nodeSpec,
  rawNodeColumns,
  type RawNodeRow,
  toNodeRecord,
  type NodeRecord,
  type NodeRow,
} from './node.record.js';
import {
  decodePath,
  encodePath,
  isInSubtree,
  LABEL_BYTES,
  pathLength,
  subtreeEnd,
  type NodePath,
} from './paths.js';

/** How many children `expand=all` embeds per node (the rest stay reachable through `links.child_nodes`). */
export const MAX_EMBEDDED_CHILDREN = 100;
/** Rows per database round trip when streaming a subtree. */
export const STREAM_BATCH = 10000;
/** Labels are int4 and a subtree's upper bound is `label + 1`. */
const MAX_LABEL = 2_147_483_646;
/** Attempts at finding a free `-copy-<n>` suffix for a deep clone. */
const MAX_COPY_SUFFIX = 1000;

export const NODE_CONFLICTS = {
  uq_tree_nodes_code: 'A node with this code already exists in this version',
};

type Query = Record<string, unknown>;

/** Errors raised by tree_create_node with our SQLSTATEs, as domain errors. */
function functionError(err: unknown): DomainError | undefined {
  const pg = findPgError(err) as { code?: string; message?: string } | undefined;
  const message = pg?.message ?? (err as Error)?.message ?? '';
  switch (pg?.code) {
    case 'GH404':
      return notFound(message);
    case 'GH400':
      return invalidRequest(message, [{ field: 'parent_id', message }]);
    case 'GH409':
      return conflict(message);
    default:
      return undefined;
  }
}

interface StructRow {
  id: string;
  tree_version_id: string;
  parent_id: string | null;
  path: NodePath;
  depth: number;
  leaf: boolean;
}

/**
 * Tree nodes: every rule about parents, depth, leaf flags, moves, deletes and clones lives here.
 *
 * Concurrency: every structural write (create, move, delete, clone) first locks the version row (`lockVersion`, or
 * the label allocation UPDATE, which takes the same lock); they are serialized per version. Each statement after the
 * lock gets a fresh READ COMMITTED snapshot, so the parent and cycle checks see every earlier move. Plain attribute
 * updates (name, code, ...) take only the node's row lock.
 */
@Injectable()
export class NodesService {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  // ---------------------------------------------------------------- reads

  async list(
    treeCode: string,
    version: string,
    query: Query,
    lang?: Language,
  ): Promise<EnvelopeV1<Partial<NodeRecord>>> {
    return withSql(this.ds, async (sql) => {
      const scope = await resolveVersion(sql, treeCode, version);
      return this.page(sql, scope, query, lang, { defaultOrder: 'ORDER BY n.path' });
    });
  }

  /** The subtree below a node (the node excluded), depth-first; paged like every list. */
  async descendants(
    treeCode: string,
    version: string,
    nodeId: string,
    query: Query,
    lang?: Language,
  ): Promise<EnvelopeV1<Partial<NodeRecord>>> {
    return withSql(this.ds, async (sql) => {
      const scope = await resolveVersion(sql, treeCode, version);
      const root = await this.struct(sql, scope, nodeId);
      return this.page(sql, scope, query, lang, {
        defaultOrder: 'ORDER BY n.path',
        range: { from: root.path, to: subtreeEnd(root.path), exclusiveFrom: true },
      });
    });
  }

  /**
   * The whole subtree below a node as NDJSON, depth-first, read in keyset batches of STREAM_BATCH rows along the
   * path index (no connection is held while the client reads). `q` and `fields` apply; paging parameters do not.
   * Errors about the request (unknown node, bad `q`) are thrown before the stream starts.
   */
  async streamDescendants(
    treeCode: string,
    version: string,
    nodeId: string,
    query: Query,
    lang?: Language,
  ): Promise<Readable> {
    const { scope, root } = await withSql(this.ds, async (sql) => {
      const s = await resolveVersion(sql, treeCode, version);
      return { scope: s, root: await this.struct(sql, s, nodeId) };
    });
    const p = new Params();
    p.add(scope.versionId); // $1
    p.add(null); // $2: the keyset position, set per batch
    p.add(subtreeEnd(root.path)); // $3
    const join = this.translationJoin(p, lang);
    const list = parseListQuery(query, nodeSpec, 'v1', { paramOffset: p.length });
    const where = list.where ? ` AND ${list.where.sql}` : '';
    const values = [...p.values, ...(list.where?.params ?? [])];
    const text = `SELECT ${rawNodeColumns(lang !== undefined)} FROM tree_nodes n ${join.sql}
                   WHERE n.tree_version_id = $1 AND n.path > $2::bytea AND n.path < $3${where}
                   ORDER BY n.path LIMIT ${STREAM_BATCH}`;
    const batch = (after: string) =>
      withSql(this.ds, (sql) =>
        sql.rows<RawNodeRow>(
          text,
          values.map((v, i) => (i === 1 ? after : v)),
        ),
      );
    // Child counts of the whole subtree in one grouped pass over its index range (not one probe per node).
    const counts = new Map<string, number>();
    const wantsCounts = !list.fields || list.fields.includes('aggregations');
    const [firstRows] = await Promise.all([
      // The first batch is read before the response starts, so a failing query is still an ordinary error answer.
      batch(`\\x${root.path.toString('hex')}`),
      wantsCounts
        ? withSql(this.ds, (sql) =>
            sql.rows<{ parent_id: string; n: number }>(
              `SELECT parent_id, count(*)::int AS n FROM tree_nodes
                WHERE tree_version_id = $1 AND path > $2 AND path < $3 GROUP BY parent_id`,
              [scope.versionId, root.path, subtreeEnd(root.path)],
            ),
          ).then((rows) => rows.forEach((r) => counts.set(r.parent_id, r.n)))
        : undefined,
    ]);
    const write = nodeJsonWriter(list.fields, scope);
    async function* chunks(): AsyncGenerator<Buffer> {
      const out = new ChunkWriter();
      let rows = firstRows;
      while (rows.length > 0) {
        // Read the next batch while this one is turned into JSON and sent.
        const next = rows.length === STREAM_BATCH ? batch(rows[rows.length - 1].k) : undefined;
        next?.catch(() => undefined); // awaited below; an early failure must not be an unhandled rejection
        for (const row of rows) {
          const full = out.write(`${write(row, counts.get(row.id) ?? 0)}\n`);
          if (full) yield full;
        }
        rows = next ? await next : [];
      }
      const rest = out.take();
      if (rest) yield rest;
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  async get(
    treeCode: string,
    version: string,
    nodeId: string,
    query: Query,
    lang?: Language,
  ): Promise<Partial<NodeRecord>> {
    const read = parseReadQuery(query, nodeSpec, 'v1');
    return withSql(this.ds, async (sql) => {
      const scope = await resolveVersion(sql, treeCode, version);
      const record = await this.record(sql, scope, nodeId, lang, read.expand);
      return pickFields(record, read.fields);
    });
  }

  // ---------------------------------------------------------------- writes

  async create(
    treeCode: string,
    version: string,
    dto: CreateNodeDto,
    actor: Actor,
    query: Query,
  ): Promise<Partial<NodeRecord>> {
    const read = parseReadQuery(query, nodeSpec, 'v1');
    // One round trip: tree_create_node (migration 1790000200000) locks the version, hands out the label, checks the
    // parent in a snapshot taken after the lock and inserts; see there.
    const row = await withSql(this.ds, (sql) =>
      sql.one<NodeRow>(`SELECT * FROM tree_create_node($1, $2, $3, $4, $5, $6, $7, $8)`, [
        treeCode,
        version,
        dto.code,
        dto.name,
        dto.description ?? null,
        dto.metadata ?? {},
        dto.parent_id ?? null,
        actor.id,
      ]),
    ).catch((err: unknown) => {
      throw functionError(err) ?? uniqueConflict(err, NODE_CONFLICTS);
    });
    const scope: VersionScope = { treeId: row!.tree_id, treeCode, versionId: row!.tree_version_id, version };
    // A new node has no children and no translations: the inserted row is the whole record.
    return pickFields(
      toNodeRecord({ ...row!, child_count: 0 }, scope, read.expand ? [] : undefined),
      read.fields,
    );
  }

  async update(
    treeCode: string,
    version: string,
    nodeId: string,
    dto: UpdateNodeDto,
    actor: Actor,
    query: Query,
    lang?: Language,
  ): Promise<Partial<NodeRecord>> {
    const read = parseReadQuery(query, nodeSpec, 'v1');
    return inTransaction(this.ds, async (sql) => {
      const moving = dto.parent_id !== undefined;
      const scope = moving
        ? await resolveAndLockVersion(sql, treeCode, version)
        : await resolveVersion(sql, treeCode, version);
      let moved = false;
      if (moving) {
        const node = await this.struct(sql, scope, nodeId);
        if ((dto.parent_id ?? null) !== node.parent_id) {
          await this.move(sql, scope, node, dto.parent_id ?? null, actor.id);
          moved = true;
        }
      }
      const attributes = ['code', 'name', 'description', 'metadata', 'enabled'] as const;
      if (moved && attributes.every((a) => dto[a] === undefined)) {
        // The move already set updated_by and updated_at of the node: no second row version of it.
        return pickFields(await this.record(sql, scope, nodeId, lang, read.expand), read.fields);
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
      return pickFields(await this.record(sql, scope, nodeId, lang, read.expand), read.fields);
    });
  }

  /** Deletes a node; one with children is 409 unless `cascade`, which deletes the whole subtree. */
  async remove(treeCode: string, version: string, nodeId: string, cascade: boolean): Promise<void> {
    await inTransaction(this.ds, async (sql) => {
      const scope = await resolveAndLockVersion(sql, treeCode, version);
      const node = await this.struct(sql, scope, nodeId);
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
      if (node.parent_id) await this.refreshLeaf(sql, scope.versionId, [node.parent_id]);
    });
  }

  /**
   * Copies a node under `dto.parent_id` (default: beside the original). With `deep` the whole subtree is copied;
   * the copy's root takes `dto.code`, every other copied node the code `<original code>-copy-<n>`, n being the
   * smallest positive integer for which none of these codes exists in the version yet. Translations are copied.
   */
  async clone(
    treeCode: string,
    version: string,
    nodeId: string,
    dto: CloneNodeDto,
    deep: boolean,
    actor: Actor,
    query: Query,
    lang?: Language,
  ): Promise<Partial<NodeRecord>> {
    const read = parseReadQuery(query, nodeSpec, 'v1');
    return inTransaction(this.ds, async (sql) => {
      const scope = await resolveAndLockVersion(sql, treeCode, version);
      const source = await this.struct(sql, scope, nodeId);
      const parentId = dto.parent_id === undefined ? source.parent_id : dto.parent_id;
      const parent = parentId ? await this.parentFor(sql, scope, parentId) : undefined;
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
      const suffix = count > 1 ? await this.freeCopySuffix(sql, scope, from, to, dto.code) : '';
      const [base] = await this.allocateLabels(sql, scope.versionId, count);
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
      return pickFields(await this.record(sql, scope, created!.id, lang, read.expand), read.fields);
    });
  }

  // ---------------------------------------------------------------- structure helpers

  /**
   * Moves `node` with its subtree under `newParentId` (null: a root) in one set-based UPDATE of the path prefix,
   * which also sets the node's updated_by and updated_at. Runs under the version lock taken by the caller.
   */
  private async move(
    sql: Sql,
    scope: VersionScope,
    node: StructRow,
    newParentId: string | null,
    actorId: string | null,
  ): Promise<void> {
    const parent = newParentId ? await this.parentFor(sql, scope, newParentId) : undefined;
    if (parent && isInSubtree(parent.path, node.path)) {
      throw conflict(
        parent.id === node.id
          ? 'A node cannot be its own parent'
          : 'Cannot move a node under one of its own descendants (that would make a cycle)',
      );
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
    if (touched.length > 0) await this.refreshLeaf(sql, scope.versionId, touched);
  }

  /** Sets `leaf` of the given nodes from their actual children (after a child left or arrived). */
  private async refreshLeaf(sql: Sql, versionId: string, nodeIds: string[]): Promise<void> {
    await sql.exec(
      `UPDATE tree_nodes p
          SET leaf = NOT EXISTS (SELECT 1 FROM tree_nodes c WHERE c.tree_version_id = $1 AND c.parent_id = p.id)
        WHERE p.tree_version_id = $1 AND p.id = ANY($2::uuid[])`,
      [versionId, nodeIds],
    );
  }

  /**
   * Reserves `count` consecutive labels of the version and counts the nodes they will name. Takes the version
   * row lock (it is an UPDATE of that row). Returns the first label.
   */
  private async allocateLabels(sql: Sql, versionId: string, count: number): Promise<number[]> {
    const row = await sql.one<{ next_label: number }>(
      `UPDATE tree_versions SET next_label = next_label + $2::int, node_count = node_count + $2::int
        WHERE id = $1 AND next_label <= $3::int - $2::int RETURNING next_label`,
      [versionId, count, MAX_LABEL],
    );
    if (!row) {
      const exists = await sql.one(`SELECT 1 FROM tree_versions WHERE id = $1`, [versionId]);
      if (!exists) throw notFound('Version not found');
      throw conflict('This version has used up its node labels; clone it to a new version to continue');
    }
    return [row.next_label - count + 1];
  }

  /** The parent named in a body: must exist in the same version, else 400 naming parent_id. */
  private async parentFor(sql: Sql, scope: VersionScope, parentId: string): Promise<StructRow> {
    const parent = await sql.one<StructRow>(
      `SELECT id, tree_version_id, parent_id, path, depth, leaf FROM tree_nodes WHERE tree_version_id = $1 AND id = $2`,
      [scope.versionId, parentId],
    );
    if (parent) return parent;
    // Not in this version's partition: another version's node (found through the version its id names) or none.
    const elsewhere = await sql.one<{ v: string | null }>(`SELECT tree_node_version($1) AS v`, [parentId]);
    if (elsewhere?.v) {
      throw invalidRequest(`parent_id ${parentId} belongs to another tree version`, [
        { field: 'parent_id', message: 'node of another version' },
      ]);
    }
    throw invalidRequest(`parent_id ${parentId} is not a node of this version`, [
      { field: 'parent_id', message: 'no such node' },
    ]);
  }

  private async struct(sql: Sql, scope: VersionScope, nodeId: string): Promise<StructRow> {
    const node = await sql.one<StructRow>(
      `SELECT id, tree_version_id, parent_id, path, depth, leaf FROM tree_nodes WHERE id = $1 AND tree_version_id = $2`,
      [nodeId, scope.versionId],
    );
    if (!node) throw notFound(`Node ${nodeId} not found in version '${scope.version}'`);
    return node;
  }

  /** Smallest n >= 1 such that `<code>-copy-<n>` is free for every copied descendant (and differs from rootCode). */
  private async freeCopySuffix(
    sql: Sql,
    scope: VersionScope,
    from: NodePath,
    to: NodePath,
    rootCode: string,
  ): Promise<string> {
    for (let n = 1; n <= MAX_COPY_SUFFIX; n++) {
      const suffix = `-copy-${n}`;
      const taken = await sql.one(
        `SELECT 1 FROM tree_nodes s
          WHERE s.tree_version_id = $1 AND s.path > $2 AND s.path < $3
            AND (s.code || $4 = $5 OR EXISTS (SELECT 1 FROM tree_nodes o WHERE o.tree_version_id = $1 AND o.code = s.code || $4))
          LIMIT 1`,
        [scope.versionId, from, to, suffix, rootCode],
      );
      if (!taken) return suffix;
    }
    throw conflict('No free code suffix for the copied nodes; rename the existing copies first');
  }

  // ---------------------------------------------------------------- read helpers

  private async record(
    sql: Sql,
    scope: VersionScope,
    nodeId: string,
    lang: Language | undefined,
    expand: boolean,
  ) {
    const p = new Params();
    const versionParam = p.add(scope.versionId);
    const idParam = p.add(nodeId);
    const join = this.translationJoin(p, lang);
    const row = await sql.one<NodeRow>(
      `SELECT ${nodeColumns(versionParam)}${join.columns} FROM tree_nodes n ${join.sql}
        WHERE n.tree_version_id = ${versionParam} AND n.id = ${idParam}`,
      p.values,
    );
    if (!row) throw notFound(`Node ${nodeId} not found in version '${scope.version}'`);
    const children = expand ? ((await this.children(sql, scope, [row], lang)).get(row.id) ?? []) : undefined;
    return toNodeRecord(row, scope, children);
  }

  private translationJoin(p: Params, lang: Language | undefined): { columns: string; sql: string } {
    if (!lang) return { columns: '', sql: '' };
    return {
      columns: `, tr.name AS tr_name, tr.description AS tr_description`,
      sql: `LEFT JOIN tree_node_translations tr ON tr.tree_node_id = n.id AND tr.language = ${p.add(lang)}`,
    };
  }

  /** Up to MAX_EMBEDDED_CHILDREN children of each of `parents`, depth-first order, by parent id. */
  private async children(
    sql: Sql,
    scope: VersionScope,
    parents: NodeRow[],
    lang: Language | undefined,
  ): Promise<Map<string, NodeRow[]>> {
    const out = new Map<string, NodeRow[]>();
    const ids = parents.filter((r) => !r.leaf).map((r) => r.id);
    if (ids.length === 0) return out;
    const p = new Params();
    const versionParam = p.add(scope.versionId);
    const idsParam = p.add(ids);
    const join = this.translationJoin(p, lang);
    const rows = await sql.rows<NodeRow>(
      `SELECT * FROM (
         SELECT ${nodeColumns(versionParam)}${join.columns}, row_number() OVER (PARTITION BY n.parent_id ORDER BY n.path) AS rank
           FROM tree_nodes n ${join.sql}
          WHERE n.tree_version_id = ${versionParam} AND n.parent_id = ANY(${idsParam}::uuid[])) x
        WHERE x.rank <= ${MAX_EMBEDDED_CHILDREN} ORDER BY x.path`,
      p.values,
    );
    for (const r of rows) {
      const list = out.get(r.parent_id!) ?? [];
      list.push(r);
      out.set(r.parent_id!, list);
    }
    return out;
  }

  /** One page of nodes of a version (optionally within a path range), with `q`, `sort`, paging and total. */
  private async page(
    sql: Sql,
    scope: VersionScope,
    query: Query,
    lang: Language | undefined,
    opts: { defaultOrder: string; range?: { from: NodePath; to: NodePath; exclusiveFrom: boolean } },
  ): Promise<EnvelopeV1<Partial<NodeRecord>>> {
    const p = new Params();
    const versionParam = p.add(scope.versionId);
    const conditions = [`n.tree_version_id = ${versionParam}`];
    if (opts.range) {
      conditions.push(`n.path ${opts.range.exclusiveFrom ? '>' : '>='} ${p.add(opts.range.from)}`);
      conditions.push(`n.path < ${p.add(opts.range.to)}`);
    }
    const list = parseListQuery(query, nodeSpec, 'v1', { paramOffset: p.length });
    if (list.where) {
      p.values.push(...list.where.params);
      conditions.push(list.where.sql);
    }
    const where = conditions.join(' AND ');
    const countParams = [...p.values];
    const join = this.translationJoin(p, lang);
    const sorted = typeof query.sort === 'string' && query.sort.trim() !== '';
    const order = sorted ? orderByClause(list.sort) : opts.defaultOrder;
    const rows = await sql.rows<NodeRow>(
      `SELECT ${nodeColumns(versionParam)}${join.columns} FROM tree_nodes n ${join.sql}
        WHERE ${where} ${order} ${limitOffsetClause(list, { plusOne: true })}`,
      p.values,
    );
    const { items, hasMore } = takePage(rows, list.limit);
    let total: number | undefined;
    if (list.totalCount) {
      if (!opts.range && !list.where) {
        const v = await sql.one<{ node_count: number }>(
          `SELECT node_count FROM tree_versions WHERE id = $1`,
          [scope.versionId],
        );
        total = v?.node_count ?? 0;
      } else {
        const c = await sql.one<{ n: number }>(
          `SELECT count(*)::int AS n FROM tree_nodes n WHERE ${where}`,
          countParams,
        );
        total = c?.n ?? 0;
      }
    }
    const wantChildren = list.expand && (!list.fields || list.fields.includes('child_nodes'));
    const children = wantChildren ? await this.children(sql, scope, items, lang) : undefined;
    const records = items.map((r) =>
      pickFields(toNodeRecord(r, scope, children ? (children.get(r.id) ?? []) : undefined), list.fields),
    );
    return toEnvelope(records, { offset: list.offset, limit: list.limit, total, hasMore }, 'v1');
  }
}
