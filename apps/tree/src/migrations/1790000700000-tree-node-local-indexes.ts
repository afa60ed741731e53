import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The partitions of tree_nodes, by name (one per version, `tree_nodes_partition(version)`). */
async function partitions(q: QueryRunner): Promise<string[]> {
  const rows: { t: string }[] = await q.query(
    `SELECT c.relname AS t FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'tree_nodes'::regclass ORDER BY 1`,
  );
  return rows.map((r) => r.t);
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The code, path and depth indexes of tree_nodes become each partition's own, without `tree_version_id` in front:
 * a partition holds one version, so that column is the same in every entry and only made the keys 16 bytes longer.
 * The primary key `(tree_version_id, id)` and the parent index stay the parent's (the partitioned table's primary
 * key must contain the partition key).
 *
 * - `code` stays unique per version: a unique index on each partition (`<partition>_code_key`, the name a unique
 *   violation reported before, so the 409 mapping is unchanged).
 * - `path` gets a plain index: two nodes of one version cannot share a path, since a path ends with the node's own
 *   label and labels are handed out once per version (the id is derived from the same label, and is the primary
 *   key), so the uniqueness check at every insert and moved row was a second check of the primary key.
 * - Why: a move rewrites the path of every node below the moved one, and each rewritten row adds an entry to every
 *   index. Measured on an 11,111-node subtree of a 1.1 M-node version (same machine, copies of one database, 16 moves
 *   each): the backend's CPU per move went from 130-190 ms to 110-120 ms.
 *
 * Every query names its version (`tree_version_id = ...`) and is pruned to one partition, where these indexes serve
 * as the old ones did. `tree_nodes_attach` builds them on new partitions (creation, clone, CSV import).
 */
export class TreeNodeLocalIndexes1790000700000 implements MigrationInterface {
  name = 'TreeNodeLocalIndexes1790000700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE tree_nodes DROP CONSTRAINT uq_tree_nodes_code, DROP CONSTRAINT uq_tree_nodes_path`,
    );
    await q.query(`DROP INDEX ix_tree_nodes_depth`);
    for (const t of await partitions(q)) {
      await q.query(`CREATE UNIQUE INDEX ${quote(`${t}_code_key`)} ON ${quote(t)} (code)`);
      await q.query(`CREATE INDEX ${quote(`${t}_path_idx`)} ON ${quote(t)} (path)`);
      await q.query(
        `CREATE INDEX ${quote(`${t}_depth_idx`)} ON ${quote(t)} (depth) WITH (deduplicate_items = off)`,
      );
    }
    // Sorted index builds on the filled table, then ATTACH (the CHECK proves the bound: no validation scan). The
    // primary key and the parent index are adopted by the parent's; code, path and depth are the partition's own.
    await q.query(`
      CREATE OR REPLACE FUNCTION tree_nodes_attach(version_id uuid) RETURNS void
        LANGUAGE plpgsql VOLATILE STRICT
        AS $fn$
      DECLARE t text := tree_nodes_partition(version_id);
      BEGIN
        EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (tree_version_id, id)', t, t || '_pkey');
        EXECUTE format('CREATE UNIQUE INDEX %I ON %I (code)', t || '_code_key', t);
        EXECUTE format('CREATE INDEX %I ON %I (path)', t || '_path_idx', t);
        EXECUTE format('CREATE INDEX %I ON %I (parent_id) WITH (deduplicate_items = off)', t || '_parent_idx', t);
        EXECUTE format('CREATE INDEX %I ON %I (depth) WITH (deduplicate_items = off)', t || '_depth_idx', t);
        EXECUTE format('ALTER TABLE tree_nodes ATTACH PARTITION %I FOR VALUES IN (%L)', t, version_id);
      END
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Each partition's constraints and depth index as the earlier attach made them (same names), then the parent's,
    // which adopt them.
    for (const t of await partitions(q)) {
      for (const suffix of ['code_key', 'path_idx', 'depth_idx']) {
        await q.query(`DROP INDEX ${quote(`${t}_${suffix}`)}`);
      }
      await q.query(
        `ALTER TABLE ${quote(t)} ADD CONSTRAINT ${quote(`${t}_code_key`)} UNIQUE (tree_version_id, code),
                                ADD CONSTRAINT ${quote(`${t}_path_key`)} UNIQUE (tree_version_id, path)`,
      );
      await q.query(
        `CREATE INDEX ${quote(`${t}_depth_idx`)} ON ${quote(t)} (tree_version_id, depth) WITH (deduplicate_items = off)`,
      );
    }
    await q.query(
      `ALTER TABLE tree_nodes ADD CONSTRAINT uq_tree_nodes_code UNIQUE (tree_version_id, code),
                              ADD CONSTRAINT uq_tree_nodes_path UNIQUE (tree_version_id, path)`,
    );
    await q.query(
      `CREATE INDEX ix_tree_nodes_depth ON tree_nodes (tree_version_id, depth) WITH (deduplicate_items = off)`,
    );
    await q.query(`
      CREATE OR REPLACE FUNCTION tree_nodes_attach(version_id uuid) RETURNS void
        LANGUAGE plpgsql VOLATILE STRICT
        AS $fn$
      DECLARE t text := tree_nodes_partition(version_id);
      BEGIN
        EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (tree_version_id, id),'
                       ' ADD CONSTRAINT %I UNIQUE (tree_version_id, code), ADD CONSTRAINT %I UNIQUE (tree_version_id, path)',
                       t, t || '_pkey', t || '_code_key', t || '_path_key');
        EXECUTE format('CREATE INDEX %I ON %I (parent_id) WITH (deduplicate_items = off)', t || '_parent_idx', t);
        EXECUTE format('CREATE INDEX %I ON %I (tree_version_id, depth) WITH (deduplicate_items = off)',
                       t || '_depth_idx', t);
        EXECUTE format('ALTER TABLE tree_nodes ATTACH PARTITION %I FOR VALUES IN (%L)', t, version_id);
      END
      $fn$`);
  }
}
