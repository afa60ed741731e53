import { Db, listPage, Params, type ListPage, type Sql } from '@gatehouse/db';
import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '@gatehouse/errors';
import type { ListRequest } from '@gatehouse/query';
import type { Actor } from '../common/actor.js';
import { DEFAULT_LANGUAGE, normalizeLanguage, type Language } from '../common/language.js';
import { nodePath, treePath, versionPath } from '../common/links.js';
import type { InstanceKey } from '../common/instance.js';
import { resolveTree, resolveVersion } from '../common/scope.js';
import { uniqueConflict } from '../common/tree-db.js';
import type { CreateTranslationDto, UpdateTranslationDto } from './dto/translation.dto.js';
import type { TranslationRecord } from './translation.record.js';

/** The record a translation belongs to, as given by the path. */
export type Subject = { instance: InstanceKey } & (
  | { kind: 'tree'; treeCode: string }
  | { kind: 'version'; treeCode: string; version: string }
  | { kind: 'node'; treeCode: string; version: string; nodeId: string }
);

interface Resolved {
  table: string;
  /** Column holding the subject id. */
  column: string;
  subjectId: string;
  /** For node translations: the version (stored with each row, locked while writing). */
  versionId?: string;
  basePath: string;
  noun: string;
}

const CONFLICT = 'A translation in this language already exists';
const CONFLICTS = {
  uq_tree_translations_language: CONFLICT,
  uq_tree_version_translations_language: CONFLICT,
  uq_tree_node_translations_language: CONFLICT,
};

interface Row {
  id: string;
  label_id: string;
  language: string;
  name: string | null;
  description: string | null;
  created_by: string | null;
  created_at: Date;
  updated_by: string | null;
  updated_at: Date;
}

/** Translations of trees, versions and nodes: the same five operations over three tables. */
@Injectable()
export class TranslationsService {
  constructor(@Inject(Db) private readonly db: Db) {}

  async list(subject: Subject, req: ListRequest): Promise<ListPage<TranslationRecord>> {
    return this.db.connection(async (sql) => {
      const s = await this.resolve(sql, subject);
      const page = await listPage<Row>(sql, {
        ...req,
        params: [s.subjectId],
        conditions: [`x.${s.column} = $1`],
        select: () => this.columns(s),
        from: `${s.table} x`,
        defaultOrder: 'ORDER BY x.language',
      });
      return { ...page, rows: page.rows.map((r) => this.record(s, r)) };
    });
  }

  async get(subject: Subject, language: Language): Promise<TranslationRecord> {
    return this.db.connection(async (sql) => {
      const s = await this.resolve(sql, subject);
      return this.record(s, await this.row(sql, s, language));
    });
  }

  async create(subject: Subject, dto: CreateTranslationDto, actor: Actor): Promise<TranslationRecord> {
    const language = dto.language ? normalizeLanguage(dto.language)! : DEFAULT_LANGUAGE;
    return this.db.transaction(async (sql) => {
      const s = await this.resolve(sql, subject, true);
      const cols = [s.column, 'language', 'name', 'description', 'created_by', 'updated_by'];
      const values: unknown[] = [
        s.subjectId,
        language,
        dto.name ?? null,
        dto.description ?? null,
        actor.id,
        actor.id,
      ];
      if (s.versionId) {
        cols.push('tree_version_id');
        values.push(s.versionId);
      }
      await sql
        .exec(
          `INSERT INTO ${s.table} (${cols.join(', ')}) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})`,
          values,
        )
        .catch((err: unknown) => {
          throw uniqueConflict(err, CONFLICTS);
        });
      return this.record(s, await this.row(sql, s, language));
    });
  }

  async update(
    subject: Subject,
    language: Language,
    dto: UpdateTranslationDto,
    actor: Actor,
  ): Promise<TranslationRecord> {
    return this.db.connection(async (sql) => {
      const s = await this.resolve(sql, subject);
      const p = new Params();
      const sets: string[] = [];
      if (dto.name !== undefined) sets.push(`name = ${p.add(dto.name)}`);
      if (dto.description !== undefined) sets.push(`description = ${p.add(dto.description)}`);
      sets.push(`updated_by = ${p.add(actor.id)}`, 'updated_at = now()');
      const n = await sql.exec(
        `UPDATE ${s.table} SET ${sets.join(', ')} WHERE ${s.column} = ${p.add(s.subjectId)} AND language = ${p.add(language)}`,
        p.values,
      );
      if (n === 0) throw notFound(`No ${language} translation of this ${s.noun}`);
      return this.record(s, await this.row(sql, s, language));
    });
  }

  async remove(subject: Subject, language: Language): Promise<void> {
    await this.db.connection(async (sql) => {
      const s = await this.resolve(sql, subject);
      const n = await sql.exec(`DELETE FROM ${s.table} WHERE ${s.column} = $1 AND language = $2`, [
        s.subjectId,
        language,
      ]);
      if (n === 0) throw notFound(`No ${language} translation of this ${s.noun}`);
    });
  }

  private columns(s: Resolved): string {
    return `x.id, x.${s.column} AS label_id, x.language, x.name, x.description, x.created_by, x.created_at,
            x.updated_by, x.updated_at`;
  }

  private async row(sql: Sql, s: Resolved, language: Language): Promise<Row> {
    const row = await sql.one<Row>(
      `SELECT ${this.columns(s)} FROM ${s.table} x WHERE x.${s.column} = $1 AND x.language = $2`,
      [s.subjectId, language],
    );
    if (!row) throw notFound(`No ${language} translation of this ${s.noun}`);
    return row;
  }

  private record(s: Resolved, r: Row): TranslationRecord {
    return { ...r, links: { self: `${s.basePath}/translations/${r.language}`, subject: s.basePath } };
  }

  /**
   * Finds the subject (404 when missing). With `forWrite` on a node, takes a share lock on the version row first:
   * a concurrent node delete (which holds the version lock) finishes before we look, and cannot start before we
   * commit, so no translation outlives its node.
   */
  private async resolve(sql: Sql, subject: Subject, forWrite = false): Promise<Resolved> {
    switch (subject.kind) {
      case 'tree': {
        const t = await resolveTree(sql, subject.instance, subject.treeCode);
        return {
          table: 'tree_translations',
          column: 'tree_id',
          subjectId: t.treeId,
          basePath: treePath(subject.treeCode),
          noun: 'tree',
        };
      }
      case 'version': {
        const v = await resolveVersion(sql, subject.instance, subject.treeCode, subject.version);
        return {
          table: 'tree_version_translations',
          column: 'tree_version_id',
          subjectId: v.versionId,
          basePath: versionPath(subject.treeCode, subject.version),
          noun: 'tree version',
        };
      }
      case 'node': {
        const v = await resolveVersion(sql, subject.instance, subject.treeCode, subject.version);
        if (forWrite) await sql.one(`SELECT 1 FROM tree_versions WHERE id = $1 FOR SHARE`, [v.versionId]);
        const node = await sql.one(`SELECT 1 FROM tree_nodes WHERE id = $1 AND tree_version_id = $2`, [
          subject.nodeId,
          v.versionId,
        ]);
        if (!node) throw notFound(`Node ${subject.nodeId} not found in version '${subject.version}'`);
        return {
          table: 'tree_node_translations',
          column: 'tree_node_id',
          subjectId: subject.nodeId,
          versionId: v.versionId,
          basePath: nodePath(subject.treeCode, subject.version, subject.nodeId),
          noun: 'tree node',
        };
      }
    }
  }
}
