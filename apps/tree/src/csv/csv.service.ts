import { Db, type Sql } from '@gatehouse/db';
import { Readable, Transform } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { CsvError, parse } from 'csv-parse';
import { DomainError, ErrorCode, invalidRequest, type ErrorDetail } from '@gatehouse/errors';
import { SERVICE_ENV } from '@gatehouse/service';
import type { Actor } from '../common/actor.js';
import { LANGUAGES, type Language } from '../common/language.js';
import { lockVersion, resolveVersion } from '../common/scope.js';
import type { InstanceKey } from '../common/instance.js';
import { allowBulkStatements } from '../common/tree-db.js';
import { ChunkWriter } from '../common/stream.js';
import { type NodePath } from '../nodes/paths.js';
import {
  BASE_COLUMNS,
  csvLine,
  lineProblems,
  parseHeader,
  unescapeFormula,
  type CsvLayout,
} from './csv-format.js';

/** Rows per INSERT into the staging table while the upload streams in. */
const LOAD_BATCH = 5000;
/** Rows per database round trip when exporting. */
const EXPORT_BATCH = 10000;
/** Line-numbered problems reported at most (the import stops reading after that many). */
export const MAX_REPORTED_PROBLEMS = 100;
/** Deepest tree an import may build (paths grow by 4 bytes a level). */
export const MAX_IMPORT_DEPTH = 1000;
const MAX_LABEL = 2_147_483_646;

/** Translation columns of the staging table, by language. */
const TR_COLUMNS: Record<Language, { name: string; description: string }> = {
  en_US: { name: 'en_us_name', description: 'en_us_description' },
  en_UK: { name: 'en_uk_name', description: 'en_uk_description' },
  mn_MN: { name: 'mn_mn_name', description: 'mn_mn_description' },
};

export interface ImportResult {
  /** Nodes created by this import. */
  imported: number;
  /** Nodes of the version before the import that were deleted (`replace=true`). */
  replaced: number;
  /** Nodes in the version now. */
  nodes: number;
}

interface Problem {
  line: number;
  message: string;
}

function failure(problems: Problem[], truncated = false): DomainError {
  const sorted = [...problems].sort((a, b) => a.line - b.line).slice(0, MAX_REPORTED_PROBLEMS);
  const details: ErrorDetail[] = sorted.map((p) => ({ field: `line ${p.line}`, message: p.message }));
  const more = truncated || problems.length > sorted.length ? ' (first problems only)' : '';
  const head = sorted
    .slice(0, 3)
    .map((p) => `line ${p.line}: ${p.message}`)
    .join('; ');
  return invalidRequest(`CSV import refused, nothing was written${more}: ${head}`, details);
}

/** What one upload may cost: bytes in all, bytes a line, and how long it may send nothing. */
interface UploadLimits {
  maxBytes: number;
  maxRecordBytes: number;
  idleMs: number;
}

/** The request body (`source`, for its abort signals) and what the parser reads (`upload`, with the limits). */
interface GuardedUpload {
  source: Readable;
  upload: Readable;
}

const tooLarge = (limits: UploadLimits) =>
  new DomainError(
    ErrorCode.PayloadTooLarge,
    `CSV import refused: the upload is larger than ${limits.maxBytes} bytes; nothing was written`,
  );

/**
 * The upload as the parser reads it: fails with 413 once more than `maxBytes` arrived, and with 400 when no byte
 * arrives for `idleMs` (a stalled client must not hold a transaction and a pool connection).
 */
function guardUpload(source: Readable, limits: UploadLimits): GuardedUpload {
  let received = 0;
  let timer: NodeJS.Timeout | undefined;
  const upload = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      if (received > limits.maxBytes) return done(tooLarge(limits));
      arm();
      done(null, chunk);
    },
    flush(done) {
      if (timer) clearTimeout(timer);
      done();
    },
  });
  const arm = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      upload.destroy(
        invalidRequest(
          `The upload sent nothing for ${limits.idleMs / 1000} s and was aborted; nothing was written`,
        ),
      );
    }, limits.idleMs);
    timer.unref();
  };
  upload.once('close', () => timer && clearTimeout(timer));
  source.on('error', (err) => upload.destroy(err));
  arm();
  source.pipe(upload);
  return { source, upload };
}

/** Streams a version to CSV and loads one from CSV, all-or-nothing. Format: see csv-format.ts. */
@Injectable()
export class CsvService {
  private readonly maxRows: number;
  private readonly limits: UploadLimits;

  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(SERVICE_ENV)
    env: {
      TREE_IMPORT_MAX_ROWS?: number;
      TREE_IMPORT_MAX_BYTES?: number;
      TREE_IMPORT_MAX_RECORD_BYTES?: number;
      TREE_IMPORT_IDLE_SEC?: number;
    },
  ) {
    this.maxRows = env.TREE_IMPORT_MAX_ROWS ?? 5_000_000;
    this.limits = {
      maxBytes: env.TREE_IMPORT_MAX_BYTES ?? 1024 * 1024 * 1024,
      maxRecordBytes: env.TREE_IMPORT_MAX_RECORD_BYTES ?? 64 * 1024,
      idleMs: (env.TREE_IMPORT_IDLE_SEC ?? 30) * 1000,
    };
  }

  /**
   * The version as CSV, parents before children. Runs in one REPEATABLE READ transaction (a consistent snapshot
   * even while the version changes), reading keyset batches along the path index; the parent code of each line
   * comes from a stack of the current ancestors, so no join and no per-node memory is needed.
   */
  async export(instance: InstanceKey, treeCode: string, version: string): Promise<Readable> {
    const scope = await this.db.connection((sql) => resolveVersion(sql, instance, treeCode, version));
    const db = this.db;
    async function* chunks(): AsyncGenerator<Buffer> {
      const tx = await db.begin({ isolation: 'REPEATABLE READ', readOnly: true });
      try {
        const q = <T>(text: string, params: unknown[]) => tx.rows<T>(text, params);
        const used = await q<{ language: Language }>(
          `SELECT DISTINCT language FROM tree_node_translations WHERE tree_version_id = $1`,
          [scope.versionId],
        );
        const languages = LANGUAGES.filter((l) => used.some((u) => u.language === l));
        const header = [...BASE_COLUMNS, ...languages.flatMap((l) => [`name@${l}`, `description@${l}`])];
        const out = new ChunkWriter();
        out.write(csvLine(header));
        const joins = languages
          .map(
            (l, i) =>
              `LEFT JOIN tree_node_translations t${i} ON t${i}.tree_node_id = n.id AND t${i}.language = '${l}'`,
          )
          .join(' ');
        const trCols = languages.map((_, i) => `, t${i}.name AS n${i}, t${i}.description AS d${i}`).join('');
        const stack: { path: NodePath; code: string }[] = [];
        let after: NodePath = Buffer.alloc(0);
        for (;;) {
          const rows = await q<
            { code: string; name: string; description: string | null; path: NodePath } & Record<
              string,
              string | null
            >
          >(
            `SELECT n.code, n.name, n.description, n.path${trCols} FROM tree_nodes n ${joins}
              WHERE n.tree_version_id = $1 AND n.path > $2 ORDER BY n.path LIMIT ${EXPORT_BATCH}`,
            [scope.versionId, after],
          );
          if (rows.length === 0) break;
          for (const r of rows) {
            while (stack.length > 0 && stack[stack.length - 1].path.length >= r.path.length) stack.pop();
            const parent = stack.length > 0 ? stack[stack.length - 1].code : '';
            stack.push({ path: r.path, code: r.code });
            const line: (string | null)[] = [r.code, parent, r.name, r.description ?? ''];
            languages.forEach((_, i) => line.push(r[`n${i}`] ?? '', r[`d${i}`] ?? ''));
            const full = out.write(csvLine(line));
            if (full) yield full;
          }
          if (rows.length < EXPORT_BATCH) break;
          after = rows[rows.length - 1].path;
        }
        const rest = out.take();
        if (rest) yield rest;
        await tx.commit();
      } finally {
        // after a commit this does nothing; on an error or a client that stopped reading it ends the snapshot
        await tx.rollback().catch(() => undefined);
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  /**
   * Loads CSV lines into the version in one transaction: the upload is parsed as it streams in and staged in a
   * temporary table; then duplicate codes, unknown parents and cycles are found set-based, paths are computed by one
   * recursive query, and nodes and translations are inserted set-based. Any problem: 400 naming the lines, nothing
   * written. With `replace` the version's current nodes are deleted first (in the same transaction); a file without
   * nodes is then refused, as it would leave the version without a root.
   */
  async import(
    instance: InstanceKey,
    treeCode: string,
    version: string,
    body: Readable,
    actor: Actor,
    replace: boolean,
  ): Promise<ImportResult> {
    const declared = Number((body as { headers?: Record<string, unknown> }).headers?.['content-length']);
    if (Number.isFinite(declared) && declared > this.limits.maxBytes) throw tooLarge(this.limits);
    return this.db.transaction(async (sql) => {
      await allowBulkStatements(sql);
      const scope = await resolveVersion(sql, instance, treeCode, version);
      const nextLabel = async () =>
        (await sql.one<{ next_label: number }>(`SELECT next_label FROM tree_versions WHERE id = $1`, [
          scope.versionId,
        ]))!.next_label;
      // Staged before the version is locked: a slow upload holds no lock that other writers of the version wait
      // for. Labels are numbered from the version's counter as read now, and shifted should it move meanwhile.
      const staged = await nextLabel();
      await sql.exec(
        `CREATE TEMP TABLE import_rows (
           label integer NOT NULL, line integer NOT NULL, code text NOT NULL, parent_code text, name text NOT NULL,
           description text, en_us_name text, en_us_description text, en_uk_name text, en_uk_description text,
           mn_mn_name text, mn_mn_description text) ON COMMIT DROP`,
      );
      const count = await this.load(sql, guardUpload(body, this.limits), staged + 1);
      if (replace && count === 0) {
        // Document 3: every version contains at least one root node; replacing with nothing would leave none.
        throw invalidRequest(
          'CSV import refused, nothing was written: replace=true with a file without nodes would leave the version ' +
            'without a root node; a tree version keeps at least one',
        );
      }
      // Held until commit: no structural write in this version runs while its import is applied.
      await lockVersion(sql, scope.versionId);
      let replaced = 0;
      if (replace) {
        await sql.exec(`DELETE FROM tree_node_translations WHERE tree_version_id = $1`, [scope.versionId]);
        replaced = await sql.exec(`DELETE FROM tree_nodes WHERE tree_version_id = $1`, [scope.versionId]);
        await sql.exec(`UPDATE tree_versions SET node_count = 0 WHERE id = $1`, [scope.versionId]);
      }
      if (count === 0) {
        return { imported: 0, replaced, nodes: await this.nodeCount(sql, scope.versionId) };
      }
      const lastLabel = await nextLabel();
      if (lastLabel !== staged) {
        await sql.exec(`UPDATE import_rows SET label = label + $1`, [lastLabel - staged]);
      }
      if (lastLabel + count > MAX_LABEL) {
        throw failure([{ line: 1, message: 'this version has no node labels left for so many nodes' }]);
      }
      await sql.exec(`CREATE UNIQUE INDEX ON import_rows (label)`);
      await sql.exec(`CREATE INDEX ON import_rows (code)`);
      await sql.exec(`CREATE INDEX ON import_rows (parent_code)`);
      await sql.exec(`ANALYZE import_rows`);
      await this.validate(sql, scope.versionId);
      await this.insert(sql, scope.versionId, scope.treeId, actor, count, lastLabel + count);
      return { imported: count, replaced, nodes: await this.nodeCount(sql, scope.versionId) };
    });
  }

  private async nodeCount(sql: Sql, versionId: string): Promise<number> {
    return (await sql.one<{ node_count: number }>(`SELECT node_count FROM tree_versions WHERE id = $1`, [
      versionId,
    ]))!.node_count;
  }

  /** Parses the upload and stages its lines; returns their number. Line problems are collected, then thrown. */
  private async load(sql: Sql, body: GuardedUpload, base: number): Promise<number> {
    const { upload, source } = body as GuardedUpload;
    const parser = upload.pipe(
      parse({
        bom: true,
        info: true,
        skip_empty_lines: true,
        relax_column_count: true,
        relax_quotes: false,
        max_record_size: this.limits.maxRecordBytes,
      }),
    );
    upload.on('error', (err) => parser.destroy(err));
    // A client that goes away mid-upload must not leave a partial file to be imported.
    const aborted = () => parser.destroy(invalidRequest('The upload was interrupted; nothing was written'));
    source.on('aborted', aborted);
    source.on('close', () => {
      if ((source as { complete?: boolean }).complete === false) aborted();
    });
    const problems: Problem[] = [];
    let layout: CsvLayout | undefined;
    let batch: (string | number | null)[][] = [];
    let count = 0;
    const columns = 12;
    const flush = async () => {
      if (batch.length === 0 || problems.length > 0) {
        batch = [];
        return;
      }
      const arrays: unknown[][] = Array.from({ length: columns }, () => []);
      for (const row of batch) row.forEach((v, i) => arrays[i].push(v));
      batch = [];
      await sql.exec(
        `INSERT INTO import_rows SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::text[], $5::text[],
           $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])`,
        arrays,
      );
    };
    try {
      for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
        const { info } = item;
        if (!layout) {
          const header = parseHeader(item.record);
          if (!header.layout)
            throw failure(header.problems.map((message) => ({ line: info.lines, message })));
          layout = header.layout;
          continue;
        }
        // the apostrophe export puts before a formula-like value is not part of the value
        const record = item.record.map(unescapeFormula);
        const found = lineProblems(record, layout);
        if (found.length > 0) {
          problems.push({ line: info.lines, message: found.join('; ') });
          if (problems.length >= MAX_REPORTED_PROBLEMS) throw failure(problems, true);
          continue;
        }
        if (count >= this.maxRows) {
          throw new DomainError(
            ErrorCode.PayloadTooLarge,
            `CSV import refused: more than ${this.maxRows} lines`,
          );
        }
        const tr = (lang: Language, which: 'name' | 'description') => {
          const i = layout!.translations.get(lang)?.[which];
          return i === undefined || record[i] === '' ? null : record[i];
        };
        const description = layout.description === undefined ? '' : record[layout.description];
        batch.push([
          base + count,
          info.lines,
          record[layout.code],
          record[layout.parentCode] === '' ? null : record[layout.parentCode],
          record[layout.name],
          description === '' ? null : description,
          tr('en_US', 'name'),
          tr('en_US', 'description'),
          tr('en_UK', 'name'),
          tr('en_UK', 'description'),
          tr('mn_MN', 'name'),
          tr('mn_MN', 'description'),
        ]);
        count++;
        if (batch.length >= LOAD_BATCH) await flush();
      }
    } catch (err) {
      parser.destroy();
      if (err instanceof DomainError) throw err;
      const e = err as { code?: string; message?: string; lines?: number };
      if (e.code === 'CSV_MAX_RECORD_SIZE') {
        throw new DomainError(
          ErrorCode.PayloadTooLarge,
          `CSV import refused: a line near line ${e.lines ?? 0} is longer than ${this.limits.maxRecordBytes} bytes; nothing was written`,
        );
      }
      // Every parser error is the upload's fault (csv-parse names most codes CSV_*, but not INVALID_OPENING_QUOTE).
      if (err instanceof CsvError || (typeof e.code === 'string' && e.code.startsWith('CSV_'))) {
        throw failure([{ line: e.lines ?? 0, message: `malformed CSV: ${e.message ?? e.code}` }]);
      }
      throw err;
    }
    if ((source as { complete?: boolean }).complete === false) {
      throw invalidRequest('The upload was interrupted; nothing was written');
    }
    if (!layout) throw failure([{ line: 1, message: `missing header line (${BASE_COLUMNS.join(',')})` }]);
    if (problems.length > 0) throw failure(problems);
    await flush();
    return count;
  }

  /** Duplicate codes, codes already in the version, unknown parents and cycles, all by set-based queries. */
  private async validate(sql: Sql, versionId: string): Promise<void> {
    const limit = MAX_REPORTED_PROBLEMS;
    const problems: Problem[] = [];
    const add = (rows: Problem[]) => problems.push(...rows);
    add(
      await sql.rows<Problem>(
        `SELECT line, format('duplicate code %L (first on line %s)', code, first) AS message
           FROM (SELECT line, code, min(line) OVER (PARTITION BY code) AS first FROM import_rows) x
          WHERE line <> first ORDER BY line LIMIT ${limit}`,
      ),
    );
    add(
      await sql.rows<Problem>(
        `SELECT r.line, format('code %L already exists in this version', r.code) AS message
           FROM import_rows r JOIN tree_nodes n ON n.tree_version_id = $1 AND n.code = r.code
          ORDER BY r.line LIMIT ${limit}`,
        [versionId],
      ),
    );
    add(
      await sql.rows<Problem>(
        `SELECT r.line, format('unknown parent_code %L (no such line, nor node in the version)', r.parent_code) AS message
           FROM import_rows r
          WHERE r.parent_code IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM import_rows p WHERE p.code = r.parent_code)
            AND NOT EXISTS (SELECT 1 FROM tree_nodes n WHERE n.tree_version_id = $1 AND n.code = r.parent_code)
          ORDER BY r.line LIMIT ${limit}`,
        [versionId],
      ),
    );
    if (problems.length > 0) throw failure(problems);

    // Paths: from the file's roots and from lines whose parent is an existing node, down the parent codes.
    await sql.exec(
      `CREATE TEMP TABLE import_paths ON COMMIT DROP AS
       WITH RECURSIVE p (label, code, path) AS (
           SELECT r.label, r.code, int4send(r.label) FROM import_rows r WHERE r.parent_code IS NULL
         UNION ALL
           SELECT r.label, r.code, e.path || int4send(r.label)
             FROM import_rows r JOIN tree_nodes e ON e.tree_version_id = $1 AND e.code = r.parent_code
         UNION ALL
           SELECT r.label, r.code, p.path || int4send(r.label)
             FROM p JOIN import_rows r ON r.parent_code = p.code
            WHERE length(p.path) < ${4 * MAX_IMPORT_DEPTH})
       SELECT label, path FROM p`,
      [versionId],
    );
    const unreached = await sql.rows<Problem>(
      `SELECT r.line, format('node %L is not reachable from a root: its parent chain forms a cycle or is deeper than %s levels',
                             r.code, ${MAX_IMPORT_DEPTH}) AS message
         FROM import_rows r WHERE NOT EXISTS (SELECT 1 FROM import_paths p WHERE p.label = r.label)
        ORDER BY r.line LIMIT ${limit}`,
    );
    if (unreached.length > 0) throw failure(unreached);
  }

  private async insert(
    sql: Sql,
    versionId: string,
    treeId: string,
    actor: Actor,
    count: number,
    lastLabel: number,
  ) {
    await sql.exec(
      `INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, description, depth, leaf, parent_id, path,
                               created_by, updated_by)
       SELECT tree_node_id($1, p.label), $2, $1, r.code, r.name, r.description, length(p.path) / 4 - 1,
              NOT EXISTS (SELECT 1 FROM import_rows c WHERE c.parent_code = r.code),
              CASE WHEN length(p.path) = 4 THEN NULL
                   ELSE tree_path_node_id($1, substring(p.path for length(p.path) - 4)) END,
              p.path, $3, $3
         FROM import_paths p JOIN import_rows r ON r.label = p.label
        ORDER BY p.path`,
      [versionId, treeId, actor.id],
    );
    // Existing nodes (append mode) that received children from the file.
    await sql.exec(
      `UPDATE tree_nodes n SET leaf = false
         FROM (SELECT DISTINCT r.parent_code FROM import_rows r
                WHERE r.parent_code IS NOT NULL AND NOT EXISTS (SELECT 1 FROM import_rows f WHERE f.code = r.parent_code)) e
        WHERE n.tree_version_id = $1 AND n.code = e.parent_code AND n.leaf`,
      [versionId],
    );
    for (const lang of LANGUAGES) {
      const c = TR_COLUMNS[lang];
      await sql.exec(
        `INSERT INTO tree_node_translations (tree_version_id, tree_node_id, language, name, description, created_by, updated_by)
         SELECT $1, tree_node_id($1, r.label), $2, r.${c.name}, r.${c.description}, $3, $3
           FROM import_rows r WHERE r.${c.name} IS NOT NULL OR r.${c.description} IS NOT NULL`,
        [versionId, lang, actor.id],
      );
    }
    await sql.exec(`UPDATE tree_versions SET next_label = $2, node_count = node_count + $3 WHERE id = $1`, [
      versionId,
      lastLabel,
      count,
    ]);
  }
}
