import { findPgError, listPage, Params, type ListPage, type Sql } from '@gatehouse/db';
import { conflict, DomainError, invalidRequest, notFound } from '@gatehouse/errors';
import { groupByParent, type ListRequest } from '@gatehouse/query';
import type { Language } from '../common/language.js';
import type { VersionScope } from '../common/scope.js';
import { nodeColumns, toNodeRecord, type NodeRecord, type NodeRow } from './node.record.js';
import type { NodePath } from './paths.js';

/*
 * The SQL of tree nodes, shared by the reads (nodes.reads.ts) and the structural writes (nodes.writes.ts): every
 * function runs on the connection (and transaction) it is given.
 */

/** How many children `expand=all` embeds per node (the rest stay reachable through `links.child_nodes`). */
export const MAX_EMBEDDED_CHILDREN = 100;
/** Rows per database round trip when streaming a subtree. */
export const STREAM_BATCH = 10000;
/** Labels are int4 and a subtree's upper bound is `label + 1`. */
export const MAX_LABEL = 2_147_483_646;
/** Attempts at finding a free `-copy-<n>` suffix for a deep clone. */
export const MAX_COPY_SUFFIX = 1000;

export const NODE_CONFLICTS = {
  uq_tree_nodes_code: 'A node with this code already exists in this version',
};

/** Errors raised by tree_create_node with our SQLSTATEs, as domain errors. */
export function functionError(err: unknown): DomainError | undefined {
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

export interface StructRow {
  id: string;
  tree_version_id: string;
  parent_id: string | null;
  path: NodePath;
  depth: number;
  leaf: boolean;
}

/** Sets `leaf` of the given nodes from their actual children (after a child left or arrived). */
export async function refreshLeaf(sql: Sql, versionId: string, nodeIds: string[]): Promise<void> {
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
export async function allocateLabels(sql: Sql, versionId: string, count: number): Promise<number[]> {
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
export async function parentFor(sql: Sql, scope: VersionScope, parentId: string): Promise<StructRow> {
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

export async function struct(sql: Sql, scope: VersionScope, nodeId: string): Promise<StructRow> {
  const node = await sql.one<StructRow>(
    `SELECT id, tree_version_id, parent_id, path, depth, leaf FROM tree_nodes WHERE id = $1 AND tree_version_id = $2`,
    [nodeId, scope.versionId],
  );
  if (!node) throw notFound(`Node ${nodeId} not found in version '${scope.version}'`);
  return node;
}

/** Smallest n >= 1 such that `<code>-copy-<n>` is free for every copied descendant (and differs from rootCode). */
export async function freeCopySuffix(
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

export async function readNodeRecord(
  sql: Sql,
  scope: VersionScope,
  nodeId: string,
  lang: Language | undefined,
  expand: boolean,
): Promise<NodeRecord> {
  const p = new Params();
  const versionParam = p.add(scope.versionId);
  const idParam = p.add(nodeId);
  const join = translationJoin(p, lang);
  const row = await sql.one<NodeRow>(
    `SELECT ${nodeColumns(versionParam)}${join.columns} FROM tree_nodes n ${join.sql}
      WHERE n.tree_version_id = ${versionParam} AND n.id = ${idParam}`,
    p.values,
  );
  if (!row) throw notFound(`Node ${nodeId} not found in version '${scope.version}'`);
  const children = expand ? ((await childrenOf(sql, scope, [row], lang)).get(row.id) ?? []) : undefined;
  return toNodeRecord(row, scope, children);
}

export function translationJoin(p: Params, lang: Language | undefined): { columns: string; sql: string } {
  if (!lang) return { columns: '', sql: '' };
  return {
    columns: `, tr.name AS tr_name, tr.description AS tr_description`,
    sql: `LEFT JOIN tree_node_translations tr ON tr.tree_node_id = n.id AND tr.language = ${p.add(lang)}`,
  };
}

/** Up to MAX_EMBEDDED_CHILDREN children of each of `parents`, depth-first order, by parent id. */
export async function childrenOf(
  sql: Sql,
  scope: VersionScope,
  parents: NodeRow[],
  lang: Language | undefined,
): Promise<Map<string, NodeRow[]>> {
  const ids = parents.filter((r) => !r.leaf).map((r) => r.id);
  if (ids.length === 0) return new Map();
  const p = new Params();
  const versionParam = p.add(scope.versionId);
  const idsParam = p.add(ids);
  const join = translationJoin(p, lang);
  const rows = await sql.rows<NodeRow>(
    `SELECT * FROM (
       SELECT ${nodeColumns(versionParam)}${join.columns}, row_number() OVER (PARTITION BY n.parent_id ORDER BY n.path) AS rank
         FROM tree_nodes n ${join.sql}
        WHERE n.tree_version_id = ${versionParam} AND n.parent_id = ANY(${idsParam}::uuid[])) x
      WHERE x.rank <= ${MAX_EMBEDDED_CHILDREN} ORDER BY x.path`,
    p.values,
  );
  return groupByParent(rows, (r) => r.parent_id!);
}

/** One page of nodes of a version (optionally within a path range), with `q`, `sort`, paging and total. */
export async function page(
  sql: Sql,
  scope: VersionScope,
  req: ListRequest,
  lang: Language | undefined,
  opts: { defaultOrder: string; range?: { from: NodePath; to: NodePath; exclusiveFrom: boolean } },
): Promise<ListPage<NodeRecord>> {
  const p = new Params();
  const versionParam = p.add(scope.versionId);
  const conditions = [`n.tree_version_id = ${versionParam}`];
  if (opts.range) {
    conditions.push(`n.path ${opts.range.exclusiveFrom ? '>' : '>='} ${p.add(opts.range.from)}`);
    conditions.push(`n.path < ${p.add(opts.range.to)}`);
  }
  const page = await listPage<NodeRow>(sql, {
    ...req,
    params: p,
    conditions,
    select: (_list, q) => {
      const join = translationJoin(q, lang);
      return { columns: `${nodeColumns(versionParam)}${join.columns}`, from: `tree_nodes n ${join.sql}` };
    },
    countFrom: 'tree_nodes n',
    defaultOrder: opts.defaultOrder,
    // a whole version unfiltered: its node count is kept on the version row
    knownTotal: opts.range
      ? undefined
      : async () =>
          (
            await sql.one<{ node_count: number }>(`SELECT node_count FROM tree_versions WHERE id = $1`, [
              scope.versionId,
            ])
          )?.node_count ?? 0,
  });
  const { list } = page;
  const wantChildren = list.expand && (!list.fields || list.fields.includes('child_nodes'));
  const children = wantChildren ? await childrenOf(sql, scope, page.rows, lang) : undefined;
  return {
    ...page,
    rows: page.rows.map((r) => toNodeRecord(r, scope, children ? (children.get(r.id) ?? []) : undefined)),
  };
}
