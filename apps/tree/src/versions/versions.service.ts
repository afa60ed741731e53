import { Db, listPage, Params, type ListPage, type Sql } from '@gatehouse/db';
import { Inject, Injectable } from '@nestjs/common';
import { conflict, notFound } from '@gatehouse/errors';
import { groupByParent, type ListRequest, type ReadQuery } from '@gatehouse/query';
import type { Language } from '../common/language.js';
import { resolveTree, type TreeScope, type VersionScope } from '../common/scope.js';
import type { InstanceKey } from '../common/instance.js';
import { uniqueConflict } from '../common/tree-db.js';
import { nodeColumns, toNodeRecord, type NodeRow } from '../nodes/node.record.js';
import { translationJoin as nodeTranslationJoin } from '../nodes/nodes.queries.js';
import type { Actor } from '../common/actor.js';
import type {
  ChangeVersionCodeDto,
  CloneVersionDto,
  CreateVersionDto,
  UpdateVersionDto,
} from './dto/version.dto.js';
import {
  copyVersionContent,
  createRootNode,
  createVersionPartition,
  deleteVersionNodes,
} from './version-copy.js';
import { VERSION_COLUMNS, toVersionRecord, type VersionRecord, type VersionRow } from './version.record.js';

/** How many nodes `expand=all` embeds in a version (depth-first); the rest stay reachable through `links.nodes`. */
export const MAX_EMBEDDED_NODES = 100;

export const VERSION_CONFLICTS = {
  uq_tree_versions_version: 'A version with this code already exists in this tree',
};

/** `v<N>` one above the highest `v<N>` code of the tree (v1 for a tree without one). */
export async function nextFreeVersionCode(sql: Sql, treeId: string): Promise<string> {
  const row = await sql.one<{ n: number }>(
    `SELECT coalesce(max(substring(version FROM '^v([0-9]{1,9})$')::int), 0) + 1 AS n
       FROM tree_versions WHERE tree_id = $1`,
    [treeId],
  );
  return `v${row!.n}`;
}

function translationJoin(p: Params, lang: Language | undefined) {
  return lang
    ? {
        columns: `, tr.name AS tr_name, tr.description AS tr_description`,
        join: `LEFT JOIN tree_version_translations tr ON tr.tree_version_id = v.id AND tr.language = ${p.add(lang)}`,
      }
    : { columns: '', join: '' };
}

@Injectable()
export class VersionsService {
  constructor(@Inject(Db) private readonly db: Db) {}

  async list(
    instance: InstanceKey,
    treeCode: string,
    req: ListRequest,
    lang?: Language,
  ): Promise<ListPage<VersionRecord>> {
    return this.db.connection(async (sql) => {
      const tree = await resolveTree(sql, instance, treeCode);
      const page = await listPage<VersionRow>(sql, {
        ...req,
        params: [tree.treeId],
        conditions: ['v.tree_id = $1'],
        select: (_list, p) => {
          const tr = translationJoin(p, lang);
          return { columns: `${VERSION_COLUMNS}${tr.columns}`, from: `tree_versions v ${tr.join}` };
        },
        countFrom: 'tree_versions v',
        defaultOrder: 'ORDER BY v.created_at, v.id',
      });
      const wantNodes = page.list.expand && (!page.list.fields || page.list.fields.includes('nodes'));
      const nodes = wantNodes ? await this.embeddedNodes(sql, tree, page.rows, lang) : undefined;
      return {
        ...page,
        rows: page.rows.map((row) =>
          toVersionRecord(row, treeCode, nodes ? (nodes.get(row.id) ?? []) : undefined),
        ),
      };
    });
  }

  async get(
    instance: InstanceKey,
    treeCode: string,
    version: string,
    read: ReadQuery,
    lang?: Language,
  ): Promise<VersionRecord> {
    return this.db.connection(async (sql) => {
      const tree = await resolveTree(sql, instance, treeCode);
      const row = await this.row(sql, tree, version, lang);
      const nodes = read.expand ? (await this.embeddedNodes(sql, tree, [row], lang)).get(row.id) : undefined;
      return toVersionRecord(row, treeCode, nodes);
    });
  }

  /**
   * Version rows of trees for embedding in their tree records (no nodes; links instead), at most 100 per tree, by
   * tree id: one query for all the trees of a page.
   */
  async embedded(
    sql: Sql,
    trees: readonly TreeScope[],
    lang?: Language,
  ): Promise<Map<string, VersionRecord[]>> {
    if (trees.length === 0) return new Map();
    const codes = new Map(trees.map((t) => [t.treeId, t.treeCode]));
    const p = new Params();
    const ids = p.add(trees.map((t) => t.treeId));
    const tr = translationJoin(p, lang);
    const rows = await sql.rows<VersionRow>(
      `SELECT v.* FROM unnest(${ids}::uuid[]) WITH ORDINALITY AS t(id, ord) CROSS JOIN LATERAL (
         SELECT ${VERSION_COLUMNS}${tr.columns} FROM tree_versions v ${tr.join}
          WHERE v.tree_id = t.id ORDER BY v.created_at, v.id LIMIT 100) v
        ORDER BY t.ord, v.created_at, v.id`,
      p.values,
    );
    return groupByParent(
      rows,
      (r) => r.tree_id,
      (r) => toVersionRecord(r, codes.get(r.tree_id)!),
      codes.keys(),
    );
  }

  async create(
    instance: InstanceKey,
    treeCode: string,
    dto: CreateVersionDto,
    actor: Actor,
    read: ReadQuery,
    lang?: Language,
  ): Promise<VersionRecord> {
    const code = await this.db.transaction(async (sql) => {
      const tree = await resolveTree(sql, instance, treeCode);
      // Serializes version creation in this tree, so two callers never compute the same next vN.
      await sql.one(`SELECT id FROM trees WHERE id = $1 FOR NO KEY UPDATE`, [tree.treeId]);
      const version = dto.version ?? (await nextFreeVersionCode(sql, tree.treeId));
      const created = await sql
        .one<{ id: string }>(
          `INSERT INTO tree_versions (tree_id, version, name, description, metadata, created_by, updated_by)
           VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`,
          [tree.treeId, version, dto.name ?? null, dto.description ?? null, dto.metadata ?? {}, actor.id],
        )
        .catch((err: unknown) => {
          throw uniqueConflict(err, VERSION_CONFLICTS);
        });
      await createVersionPartition(sql, created!.id);
      await createRootNode(sql, created!.id, tree.treeId, actor.id);
      return version;
    });
    return this.get(instance, treeCode, code, read, lang);
  }

  async update(
    instance: InstanceKey,
    treeCode: string,
    version: string,
    dto: UpdateVersionDto,
    actor: Actor,
    read: ReadQuery,
    lang?: Language,
  ): Promise<VersionRecord> {
    await this.db.connection(async (sql) => {
      const tree = await resolveTree(sql, instance, treeCode);
      const p = new Params();
      const sets: string[] = [];
      if (dto.name !== undefined) sets.push(`name = ${p.add(dto.name)}`);
      if (dto.description !== undefined) sets.push(`description = ${p.add(dto.description)}`);
      if (dto.metadata !== undefined) sets.push(`metadata = ${p.add(dto.metadata ?? {})}`);
      if (dto.enabled !== undefined) sets.push(`enabled = ${p.add(dto.enabled)}`);
      sets.push(`updated_by = ${p.add(actor.id)}`, 'updated_at = now()');
      const n = await sql.exec(
        `UPDATE tree_versions SET ${sets.join(', ')} WHERE tree_id = ${p.add(tree.treeId)} AND version = ${p.add(version)}`,
        p.values,
      );
      if (n === 0) throw notFound(`Version '${version}' of tree '${treeCode}' not found`);
    });
    return this.get(instance, treeCode, version, read, lang);
  }

  /** Deletes a version with its nodes and translations. The last version of a tree cannot go (409). */
  async remove(instance: InstanceKey, treeCode: string, version: string): Promise<void> {
    await this.db.transaction(async (sql) => {
      const tree = await resolveTree(sql, instance, treeCode);
      await sql.one(`SELECT id FROM trees WHERE id = $1 FOR NO KEY UPDATE`, [tree.treeId]);
      const row = await sql.one<{ id: string }>(
        `SELECT id FROM tree_versions WHERE tree_id = $1 AND version = $2 FOR UPDATE`,
        [tree.treeId, version],
      );
      if (!row) throw notFound(`Version '${version}' of tree '${treeCode}' not found`);
      const others = await sql.one(`SELECT 1 FROM tree_versions WHERE tree_id = $1 AND id <> $2 LIMIT 1`, [
        tree.treeId,
        row.id,
      ]);
      if (!others) throw conflict('A tree keeps at least one version; delete the tree instead');
      await deleteVersionNodes(sql, [row.id]);
      await sql.exec(`DELETE FROM tree_versions WHERE id = $1`, [row.id]);
    });
  }

  /** Copies a version (nodes, node translations, version translations) under a new version code. */
  async clone(
    instance: InstanceKey,
    treeCode: string,
    version: string,
    dto: CloneVersionDto,
    actor: Actor,
    read: ReadQuery,
    lang?: Language,
  ): Promise<VersionRecord> {
    await this.db.transaction(async (sql) => {
      const tree = await resolveTree(sql, instance, treeCode);
      // Share lock: structural writes of the source wait until the copy is done, so all statements see one state.
      const source = await sql.one<VersionRow & { next_label: number }>(
        `SELECT id, name, description, metadata, enabled, next_label, node_count FROM tree_versions
          WHERE tree_id = $1 AND version = $2 FOR SHARE`,
        [tree.treeId, version],
      );
      if (!source) throw notFound(`Version '${version}' of tree '${treeCode}' not found`);
      const created = await sql
        .one<{ id: string }>(
          `INSERT INTO tree_versions (tree_id, version, name, description, metadata, enabled, next_label, node_count,
                                      created_by, updated_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING id`,
          [
            tree.treeId,
            dto.version,
            dto.name,
            dto.description !== undefined ? dto.description : source.description,
            dto.metadata !== undefined ? (dto.metadata ?? {}) : source.metadata,
            source.enabled,
            source.next_label,
            source.node_count,
            actor.id,
          ],
        )
        .catch((err: unknown) => {
          throw uniqueConflict(err, VERSION_CONFLICTS);
        });
      await copyVersionContent(sql, source.id, created!.id, tree.treeId, actor.id);
    });
    return this.get(instance, treeCode, dto.version, read, lang);
  }

  async changeCode(
    instance: InstanceKey,
    treeCode: string,
    version: string,
    dto: ChangeVersionCodeDto,
    actor: Actor,
    read: ReadQuery,
    lang?: Language,
  ): Promise<VersionRecord> {
    await this.db.connection(async (sql) => {
      const tree = await resolveTree(sql, instance, treeCode);
      const n = await sql
        .exec(
          `UPDATE tree_versions SET version = $3, updated_by = $4, updated_at = now() WHERE tree_id = $1 AND version = $2`,
          [tree.treeId, version, dto.new_version, actor.id],
        )
        .catch((err: unknown) => {
          throw uniqueConflict(err, VERSION_CONFLICTS);
        });
      if (n === 0) throw notFound(`Version '${version}' of tree '${treeCode}' not found`);
    });
    return this.get(instance, treeCode, dto.new_version, read, lang);
  }

  private async row(sql: Sql, tree: TreeScope, version: string, lang?: Language): Promise<VersionRow> {
    const p = new Params();
    const treeParam = p.add(tree.treeId);
    const versionParam = p.add(version);
    const tr = translationJoin(p, lang);
    const row = await sql.one<VersionRow>(
      `SELECT ${VERSION_COLUMNS}${tr.columns} FROM tree_versions v ${tr.join}
        WHERE v.tree_id = ${treeParam} AND v.version = ${versionParam}`,
      p.values,
    );
    if (!row) throw notFound(`Version '${version}' of tree '${tree.treeCode}' not found`);
    return row;
  }

  /** The first MAX_EMBEDDED_NODES nodes of the version, depth-first. */
  /**
   * The first MAX_EMBEDDED_NODES nodes (depth-first) of each version, by version id: one query for all the versions
   * of a page.
   */
  private async embeddedNodes(
    sql: Sql,
    tree: TreeScope,
    versions: readonly VersionRow[],
    lang?: Language,
  ): Promise<Map<string, ReturnType<typeof toNodeRecord>[]>> {
    if (versions.length === 0) return new Map();
    const scopes = new Map<string, VersionScope>(
      versions.map((v) => [v.id, { ...tree, versionId: v.id, version: v.version }]),
    );
    const p = new Params();
    const join = nodeTranslationJoin(p, lang);
    const first = (version: string) =>
      `SELECT ${nodeColumns(version)}${join.columns} FROM tree_nodes n ${join.sql}
        WHERE n.tree_version_id = ${version} ORDER BY n.path LIMIT ${MAX_EMBEDDED_NODES}`;
    // One version: its id as a parameter, so the plan names its one partition. Several: a lateral join, where the
    // executor prunes to one partition per version.
    const text =
      versions.length === 1
        ? first(p.add(versions[0].id))
        : `SELECT x.* FROM unnest(${p.add(versions.map((v) => v.id))}::uuid[]) WITH ORDINALITY AS ver(id, ord)
            CROSS JOIN LATERAL (${first('ver.id')}) x ORDER BY ver.ord, x.path`;
    const rows = await sql.rows<NodeRow>(text, p.values);
    return groupByParent(
      rows,
      (r) => r.tree_version_id,
      (r) => toNodeRecord(r, scopes.get(r.tree_version_id)!),
      scopes.keys(),
    );
  }
}
