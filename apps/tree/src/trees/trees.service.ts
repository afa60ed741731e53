import { Db, listPage, Params, type ListPage, type Sql } from '@gatehouse/db';
import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '@gatehouse/errors';
import type { ListRequest, ReadQuery } from '@gatehouse/query';
import type { Actor } from '../common/actor.js';
import type { InstanceKey } from '../common/instance.js';
import type { Language } from '../common/language.js';
import { resolveTree } from '../common/scope.js';
import { uniqueConflict } from '../common/tree-db.js';
import {
  copyVersionContent,
  createRootNode,
  createVersionPartition,
  deleteVersionNodes,
} from '../versions/version-copy.js';
import { VersionsService } from '../versions/versions.service.js';
import type { ChangeTreeCodeDto, CloneTreeDto, CreateTreeDto, UpdateTreeDto } from './dto/tree.dto.js';
import { TREE_COLUMNS, toTreeRecord, type TreeRecord, type TreeRow } from './tree.record.js';

/** The version every new tree starts with. */
export const DEFAULT_VERSION = 'v1';

export const TREE_CONFLICTS = { uq_trees_code: 'A tree with this code already exists' };

function translationJoin(p: Params, lang: Language | undefined) {
  return lang
    ? {
        columns: `, tr.name AS tr_name, tr.description AS tr_description`,
        join: `LEFT JOIN tree_translations tr ON tr.tree_id = t.id AND tr.language = ${p.add(lang)}`,
      }
    : { columns: '', join: '' };
}

@Injectable()
export class TreesService {
  constructor(
    @Inject(Db) private readonly db: Db,
    private readonly versions: VersionsService,
  ) {}

  async list(instance: InstanceKey, req: ListRequest, lang?: Language): Promise<ListPage<TreeRecord>> {
    return this.db.connection(async (sql) => {
      const page = await listPage<TreeRow>(sql, {
        ...req,
        params: [instance],
        conditions: ['t.instance_id = $1'],
        select: (_list, p) => {
          const tr = translationJoin(p, lang);
          return { columns: `${TREE_COLUMNS}${tr.columns}`, from: `trees t ${tr.join}` };
        },
        countFrom: 'trees t',
        defaultOrder: 'ORDER BY t.code',
      });
      const wantVersions = page.list.expand && (!page.list.fields || page.list.fields.includes('versions'));
      const versions = wantVersions
        ? await this.versions.embedded(
            sql,
            page.rows.map((row) => ({ treeId: row.id, treeCode: row.code })),
            lang,
          )
        : undefined;
      return { ...page, rows: page.rows.map((row) => toTreeRecord(row, versions?.get(row.id))) };
    });
  }

  async get(instance: InstanceKey, treeCode: string, read: ReadQuery, lang?: Language): Promise<TreeRecord> {
    return this.db.connection(async (sql) => {
      const row = await this.row(sql, instance, treeCode, lang);
      const versions = read.expand
        ? (await this.versions.embedded(sql, [{ treeId: row.id, treeCode: row.code }], lang)).get(row.id)
        : undefined;
      return toTreeRecord(row, versions);
    });
  }

  /** Creates the tree and its default version `v1` with its root node. */
  async create(
    instance: InstanceKey,
    dto: CreateTreeDto,
    actor: Actor,
    read: ReadQuery,
    lang?: Language,
  ): Promise<TreeRecord> {
    await this.db.transaction(async (sql) => {
      const tree = await sql
        .one<{ id: string }>(
          `INSERT INTO trees (instance_id, code, name, description, metadata, created_by, updated_by)
           VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`,
          [instance, dto.code, dto.name, dto.description ?? null, dto.metadata ?? {}, actor.id],
        )
        .catch((err: unknown) => {
          throw uniqueConflict(err, TREE_CONFLICTS);
        });
      const version = await sql.one<{ id: string }>(
        `INSERT INTO tree_versions (tree_id, version, created_by, updated_by) VALUES ($1, $2, $3, $3) RETURNING id`,
        [tree!.id, DEFAULT_VERSION, actor.id],
      );
      await createVersionPartition(sql, version!.id);
      await createRootNode(sql, version!.id, tree!.id, actor.id);
    });
    return this.get(instance, dto.code, read, lang);
  }

  async update(
    instance: InstanceKey,
    treeCode: string,
    dto: UpdateTreeDto,
    actor: Actor,
    read: ReadQuery,
    lang?: Language,
  ) {
    await this.db.connection(async (sql) => {
      const p = new Params();
      const sets: string[] = [];
      if (dto.name !== undefined) sets.push(`name = ${p.add(dto.name)}`);
      if (dto.description !== undefined) sets.push(`description = ${p.add(dto.description)}`);
      if (dto.metadata !== undefined) sets.push(`metadata = ${p.add(dto.metadata ?? {})}`);
      if (dto.enabled !== undefined) sets.push(`enabled = ${p.add(dto.enabled)}`);
      sets.push(`updated_by = ${p.add(actor.id)}`, 'updated_at = now()');
      const n = await sql.exec(
        `UPDATE trees SET ${sets.join(', ')} WHERE instance_id = ${p.add(instance)} AND code = ${p.add(treeCode)}`,
        p.values,
      );
      if (n === 0) throw notFound(`Tree '${treeCode}' not found`);
    });
    return this.get(instance, treeCode, read, lang);
  }

  /** Deletes the tree with every version, node and translation under it. */
  async remove(instance: InstanceKey, treeCode: string): Promise<void> {
    await this.db.transaction(async (sql) => {
      const tree = await resolveTree(sql, instance, treeCode);
      // Wait for structural writes in flight in any version, and keep new ones out until the tree is gone.
      const versions = await sql.rows<{ id: string }>(
        `SELECT id FROM tree_versions WHERE tree_id = $1 FOR UPDATE`,
        [tree.treeId],
      );
      await deleteVersionNodes(
        sql,
        versions.map((v) => v.id),
      );
      await sql.exec(`DELETE FROM trees WHERE id = $1`, [tree.treeId]);
    });
  }

  /** Deep copy under a new code: the tree, its translations, every version with its nodes and translations. */
  async clone(
    instance: InstanceKey,
    treeCode: string,
    dto: CloneTreeDto,
    actor: Actor,
    read: ReadQuery,
    lang?: Language,
  ) {
    await this.db.transaction(async (sql) => {
      const source = await sql.one<TreeRow>(
        `SELECT * FROM trees WHERE instance_id = $1 AND code = $2 FOR SHARE`,
        [instance, treeCode],
      );
      if (!source) throw notFound(`Tree '${treeCode}' not found`);
      const created = await sql
        .one<{ id: string }>(
          `INSERT INTO trees (instance_id, code, name, description, metadata, enabled, created_by, updated_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id`,
          [
            instance,
            dto.code,
            dto.name,
            dto.description !== undefined ? dto.description : source.description,
            dto.metadata !== undefined ? (dto.metadata ?? {}) : source.metadata,
            source.enabled,
            actor.id,
          ],
        )
        .catch((err: unknown) => {
          throw uniqueConflict(err, TREE_CONFLICTS);
        });
      const treeId = created!.id;
      await sql.exec(
        `INSERT INTO tree_translations (tree_id, language, name, description, created_by, updated_by)
         SELECT $2, language, name, description, $3, $3 FROM tree_translations WHERE tree_id = $1`,
        [source.id, treeId, actor.id],
      );
      const versions = await sql.rows<{ id: string }>(
        `SELECT id FROM tree_versions WHERE tree_id = $1 ORDER BY created_at, id FOR SHARE`,
        [source.id],
      );
      for (const v of versions) {
        const copy = await sql.one<{ id: string }>(
          `INSERT INTO tree_versions (tree_id, version, name, description, metadata, enabled, next_label, node_count,
                                      created_by, updated_by)
           SELECT $2, version, name, description, metadata, enabled, next_label, node_count, $3, $3
             FROM tree_versions WHERE id = $1 RETURNING id`,
          [v.id, treeId, actor.id],
        );
        await copyVersionContent(sql, v.id, copy!.id, treeId, actor.id);
      }
    });
    return this.get(instance, dto.code, read, lang);
  }

  async changeCode(
    instance: InstanceKey,
    treeCode: string,
    dto: ChangeTreeCodeDto,
    actor: Actor,
    read: ReadQuery,
    lang?: Language,
  ) {
    await this.db.connection(async (sql) => {
      const n = await sql
        .exec(
          `UPDATE trees SET code = $3, updated_by = $4, updated_at = now() WHERE instance_id = $1 AND code = $2`,
          [instance, treeCode, dto.new_code, actor.id],
        )
        .catch((err: unknown) => {
          throw uniqueConflict(err, TREE_CONFLICTS);
        });
      if (n === 0) throw notFound(`Tree '${treeCode}' not found`);
    });
    return this.get(instance, dto.new_code, read, lang);
  }

  private async row(sql: Sql, instance: InstanceKey, treeCode: string, lang?: Language): Promise<TreeRow> {
    const p = new Params();
    const where = `t.instance_id = ${p.add(instance)} AND t.code = ${p.add(treeCode)}`;
    const tr = translationJoin(p, lang);
    const [row] = await sql.read<TreeRow>(
      `SELECT ${TREE_COLUMNS}${tr.columns} FROM trees t ${tr.join} WHERE ${where}`,
      p.values,
    );
    if (!row) throw notFound(`Tree '${treeCode}' not found`);
    return row;
  }
}
