import type { MigrationInterface, QueryRunner } from 'typeorm';

const audit = `
  created_by uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_by uuid,
  updated_at timestamptz NOT NULL DEFAULT now()`;

/**
 * The tree manager's schema. Hand-written; the drift test checks that the entities describe exactly this.
 *
 * Nodes are stored as an adjacency list (`parent_id`) plus a materialized path: `path` is the array of the
 * version-local integer labels of the node's ancestors and of the node itself (root first). Labels come from the
 * version's `next_label` counter and are never reused in a version, so
 *   - a subtree is the index range `path >= P AND path < P[1:k-1] || P[k]+1` on `(tree_version_id, path)`,
 *   - `ORDER BY path` is a depth-first (pre-order) walk, siblings in creation order,
 *   - moving a subtree is one UPDATE rewriting the path prefix, and cloning a version copies paths verbatim.
 * A node's id is derived from its version and its label (`tree_node_id`), so clones and imports compute ids and
 * parent ids set-based, and ids of one version sit next to each other in the primary-key index.
 *
 * tree_nodes and tree_node_translations have no foreign keys on purpose: a per-row RI trigger costs more than the
 * whole copy when a million-node version is cloned, imported or deleted. The service keeps them consistent (all
 * structural writes of a version run under a lock on the version row) and deletes them set-based with their
 * version or tree.
 */
export class TreeSchema1790000100000 implements MigrationInterface {
  name = 'TreeSchema1790000100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pgcrypto`);

    await q.query(`
      CREATE FUNCTION tree_node_id(version_id uuid, label integer) RETURNS uuid
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS $$ SELECT (left(version_id::text, 24) || lpad(to_hex(label), 12, '0'))::uuid $$`);

    await q.query(`
      CREATE TABLE trees (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        code text NOT NULL,
        name text NOT NULL,
        description text,
        metadata jsonb NOT NULL DEFAULT '{}',
        enabled boolean NOT NULL DEFAULT true,${audit},
        CONSTRAINT pk_trees PRIMARY KEY (id),
        CONSTRAINT uq_trees_code UNIQUE (code)
      )`);

    await q.query(`
      CREATE TABLE tree_versions (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        tree_id uuid NOT NULL,
        version text NOT NULL,
        name text,
        description text,
        metadata jsonb NOT NULL DEFAULT '{}',
        enabled boolean NOT NULL DEFAULT true,
        next_label integer NOT NULL DEFAULT 0,
        node_count integer NOT NULL DEFAULT 0,${audit},
        CONSTRAINT pk_tree_versions PRIMARY KEY (id),
        CONSTRAINT uq_tree_versions_version UNIQUE (tree_id, version),
        CONSTRAINT fk_tree_versions_tree FOREIGN KEY (tree_id) REFERENCES trees (id) ON DELETE CASCADE
      )`);

    await q.query(`
      CREATE TABLE tree_nodes (
        id uuid NOT NULL,
        tree_id uuid NOT NULL,
        tree_version_id uuid NOT NULL,
        code text NOT NULL,
        name text NOT NULL,
        description text,
        metadata jsonb NOT NULL DEFAULT '{}',
        depth integer NOT NULL,
        leaf boolean NOT NULL DEFAULT true,
        parent_id uuid,
        path integer[] NOT NULL,
        enabled boolean NOT NULL DEFAULT true,${audit},
        CONSTRAINT pk_tree_nodes PRIMARY KEY (id),
        CONSTRAINT uq_tree_nodes_code UNIQUE (tree_version_id, code),
        CONSTRAINT uq_tree_nodes_path UNIQUE (tree_version_id, path),
        CONSTRAINT ck_tree_nodes_depth CHECK (depth >= 0 AND depth = cardinality(path) - 1)
      )`);
    await q.query(`CREATE INDEX ix_tree_nodes_parent ON tree_nodes (parent_id)`);
    await q.query(`CREATE INDEX ix_tree_nodes_depth ON tree_nodes (tree_version_id, depth)`);

    const languages = `language IN ('en_US', 'en_UK', 'mn_MN')`;
    await q.query(`
      CREATE TABLE tree_translations (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        tree_id uuid NOT NULL,
        language text NOT NULL,
        name text,
        description text,${audit},
        CONSTRAINT pk_tree_translations PRIMARY KEY (id),
        CONSTRAINT uq_tree_translations_language UNIQUE (tree_id, language),
        CONSTRAINT ck_tree_translations_language CHECK (${languages}),
        CONSTRAINT fk_tree_translations_tree FOREIGN KEY (tree_id) REFERENCES trees (id) ON DELETE CASCADE
      )`);
    await q.query(`
      CREATE TABLE tree_version_translations (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        tree_version_id uuid NOT NULL,
        language text NOT NULL,
        name text,
        description text,${audit},
        CONSTRAINT pk_tree_version_translations PRIMARY KEY (id),
        CONSTRAINT uq_tree_version_translations_language UNIQUE (tree_version_id, language),
        CONSTRAINT ck_tree_version_translations_language CHECK (${languages}),
        CONSTRAINT fk_tree_version_translations_version FOREIGN KEY (tree_version_id)
          REFERENCES tree_versions (id) ON DELETE CASCADE
      )`);
    await q.query(`
      CREATE TABLE tree_node_translations (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        tree_version_id uuid NOT NULL,
        tree_node_id uuid NOT NULL,
        language text NOT NULL,
        name text,
        description text,${audit},
        CONSTRAINT pk_tree_node_translations PRIMARY KEY (id),
        CONSTRAINT uq_tree_node_translations_language UNIQUE (tree_node_id, language),
        CONSTRAINT ck_tree_node_translations_language CHECK (${languages})
      )`);
    await q.query(
      `CREATE INDEX ix_tree_node_translations_version ON tree_node_translations (tree_version_id)`,
    );

    await q.query(`
      CREATE TABLE tree_settings (
        id smallint NOT NULL DEFAULT 1,
        environment text NOT NULL DEFAULT 'development',
        updated_by uuid,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_tree_settings PRIMARY KEY (id),
        CONSTRAINT ck_tree_settings_single CHECK (id = 1),
        CONSTRAINT ck_tree_settings_environment CHECK (environment IN ('development', 'staging', 'production'))
      )`);
    await q.query(`INSERT INTO tree_settings (id) VALUES (1)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE tree_settings`);
    await q.query(`DROP TABLE tree_node_translations`);
    await q.query(`DROP TABLE tree_version_translations`);
    await q.query(`DROP TABLE tree_translations`);
    await q.query(`DROP TABLE tree_nodes`);
    await q.query(`DROP TABLE tree_versions`);
    await q.query(`DROP TABLE trees`);
    await q.query(`DROP FUNCTION tree_node_id(uuid, integer)`);
  }
}
