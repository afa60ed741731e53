import { Db, Params, type ListPage } from '@gatehouse/db';
import { Readable } from 'node:stream';
import { parseListQuery, type ListRequest, type ReadQuery } from '@gatehouse/query';
import type { Language } from '../common/language.js';
import { resolveVersion } from '../common/scope.js';
import type { InstanceKey } from '../common/instance.js';
import { ChunkWriter } from '../common/stream.js';
import { RAW, nodeJsonWriter, rawNodeColumns, type NodeRecord } from './node.record.js';
import { subtreeEnd } from './paths.js';
import { STREAM_BATCH, struct, readNodeRecord, translationJoin, page } from './nodes.queries.js';

/** Reads of tree nodes: lists, subtrees (paged and streamed), one node. Each runs on its own pooled connection. */
export class NodeReads {
  constructor(private readonly db: Db) {}

  async list(
    instance: InstanceKey,
    treeCode: string,
    version: string,
    req: ListRequest,
    lang?: Language,
  ): Promise<ListPage<NodeRecord>> {
    return this.db.connection(async (sql) => {
      const scope = await resolveVersion(sql, instance, treeCode, version);
      return page(sql, scope, req, lang, { defaultOrder: 'ORDER BY n.path' });
    });
  }

  /** The subtree below a node (the node excluded), depth-first; paged like every list. */
  async descendants(
    instance: InstanceKey,
    treeCode: string,
    version: string,
    nodeId: string,
    req: ListRequest,
    lang?: Language,
  ): Promise<ListPage<NodeRecord>> {
    return this.db.connection(async (sql) => {
      const scope = await resolveVersion(sql, instance, treeCode, version);
      const root = await struct(sql, scope, nodeId);
      return page(sql, scope, req, lang, {
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
    instance: InstanceKey,
    treeCode: string,
    version: string,
    nodeId: string,
    req: ListRequest,
    lang?: Language,
  ): Promise<Readable> {
    const { scope, root } = await this.db.connection(async (sql) => {
      const s = await resolveVersion(sql, instance, treeCode, version);
      return { scope: s, root: await struct(sql, s, nodeId) };
    });
    const p = new Params();
    p.add(scope.versionId); // $1
    p.add(null); // $2: the keyset position, set per batch
    p.add(subtreeEnd(root.path)); // $3
    const join = translationJoin(p, lang);
    const list = parseListQuery(req.query, req.spec, req.version, { paramOffset: p.length });
    const where = list.where ? ` AND ${list.where.sql}` : '';
    const values = [...p.values, ...(list.where?.params ?? [])];
    const text = `SELECT ${rawNodeColumns(lang !== undefined)} FROM tree_nodes n ${join.sql}
                   WHERE n.tree_version_id = $1 AND n.path > $2::bytea AND n.path < $3${where}
                   ORDER BY n.path LIMIT ${STREAM_BATCH}`;
    const batch = (after: string) =>
      // rows as the server's text, nothing parsed: every value goes out as text again
      this.db.connection((sql) =>
        sql.texts(
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
        ? this.db
            .connection((sql) =>
              sql.rows<{ parent_id: string; n: number }>(
                `SELECT parent_id, count(*)::int AS n FROM tree_nodes
                WHERE tree_version_id = $1 AND path > $2 AND path < $3 GROUP BY parent_id`,
                [scope.versionId, root.path, subtreeEnd(root.path)],
              ),
            )
            .then((rows) => rows.forEach((r) => counts.set(r.parent_id, r.n)))
        : undefined,
    ]);
    const write = nodeJsonWriter(list.fields, scope);
    async function* chunks(): AsyncGenerator<Buffer> {
      const out = new ChunkWriter();
      let rows = firstRows;
      while (rows.length > 0) {
        // Read the next batch while this one is turned into JSON and sent.
        const next = rows.length === STREAM_BATCH ? batch(rows[rows.length - 1][RAW.k] as string) : undefined;
        next?.catch(() => undefined); // awaited below; an early failure must not be an unhandled rejection
        for (const row of rows) {
          const full = out.write(write(row, counts.get(row[RAW.id] as string) ?? 0));
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
    instance: InstanceKey,
    treeCode: string,
    version: string,
    nodeId: string,
    read: ReadQuery,
    lang?: Language,
  ): Promise<NodeRecord> {
    return this.db.connection(async (sql) => {
      const scope = await resolveVersion(sql, instance, treeCode, version);
      return readNodeRecord(sql, scope, nodeId, lang, read.expand);
    });
  }
}
