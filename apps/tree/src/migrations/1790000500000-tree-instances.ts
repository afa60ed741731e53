import type { MigrationInterface, QueryRunner } from 'typeorm';
import { CREATE_NODE_FN } from './1790000400000-tree-node-byte-paths.js';

/**
 * Trees and settings belong to an instance: every record is confined to its instance.
 *
 * - `trees.instance_id`: the instance of the client whose token created the tree, as `/tokeninfo` reports it
 *   (`instance_id`), except that the default instance is stored as the nil uuid
 *   `00000000-0000-0000-0000-000000000000`: the tree database does not know the default instance's id, and the trees
 *   that exist before this migration are the default instance's (before multi-instance mode there was no other).
 *   A sentinel rather than NULL, so `instance_id = $1` uses the unique index and two NULLs never pass as one
 *   instance. The column has no default: every insert names its instance.
 * - A tree code is unique within its instance: `uq_trees_code` becomes `(instance_id, code)` (same name, so the 409
 *   of a duplicate code is unchanged); it is also the index every look-up by (instance, code) uses.
 * - `tree_settings` has one row per instance, keyed by `instance_id` (the former single row, `id = 1`, becomes the
 *   default instance's); an instance without a row has the default settings.
 * - `tree_create_node` takes the instance as its first parameter and finds the tree by (instance, code).
 * Versions, nodes and translations hang off their tree and need no column of their own.
 */
export class TreeInstances1790000500000 implements MigrationInterface {
  name = 'TreeInstances1790000500000';

  async up(q: QueryRunner): Promise<void> {
    const nil = `'00000000-0000-0000-0000-000000000000'::uuid`;
    await q.query(`ALTER TABLE trees ADD COLUMN instance_id uuid NOT NULL DEFAULT ${nil}`);
    await q.query(`ALTER TABLE trees ALTER COLUMN instance_id DROP DEFAULT`);
    await q.query(`ALTER TABLE trees DROP CONSTRAINT uq_trees_code`);
    await q.query(`ALTER TABLE trees ADD CONSTRAINT uq_trees_code UNIQUE (instance_id, code)`);

    await q.query(`ALTER TABLE tree_settings DROP CONSTRAINT pk_tree_settings`);
    await q.query(`ALTER TABLE tree_settings DROP CONSTRAINT ck_tree_settings_single`);
    await q.query(`ALTER TABLE tree_settings DROP COLUMN id`);
    await q.query(`ALTER TABLE tree_settings ADD COLUMN instance_id uuid NOT NULL DEFAULT ${nil}`);
    await q.query(`ALTER TABLE tree_settings ALTER COLUMN instance_id DROP DEFAULT`);
    await q.query(`ALTER TABLE tree_settings ADD CONSTRAINT pk_tree_settings PRIMARY KEY (instance_id)`);

    await q.query(`DROP FUNCTION tree_create_node(text, text, text, text, text, jsonb, uuid, uuid)`);
    await q.query(CREATE_NODE_FN_INSTANCES);
  }

  /** Keeps the default instance's trees and settings; the other instances' are deleted (they had none before). */
  async down(q: QueryRunner): Promise<void> {
    const nil = `'00000000-0000-0000-0000-000000000000'::uuid`;
    await q.query(`DROP FUNCTION tree_create_node(uuid, text, text, text, text, text, jsonb, uuid, uuid)`);
    await q.query(CREATE_NODE_FN);

    await q.query(`DELETE FROM tree_settings WHERE instance_id <> ${nil}`);
    await q.query(`ALTER TABLE tree_settings DROP CONSTRAINT pk_tree_settings`);
    await q.query(`ALTER TABLE tree_settings DROP COLUMN instance_id`);
    await q.query(`ALTER TABLE tree_settings ADD COLUMN id smallint NOT NULL DEFAULT 1`);
    await q.query(`ALTER TABLE tree_settings ADD CONSTRAINT pk_tree_settings PRIMARY KEY (id)`);
    await q.query(`ALTER TABLE tree_settings ADD CONSTRAINT ck_tree_settings_single CHECK (id = 1)`);
    await q.query(`INSERT INTO tree_settings (id) VALUES (1) ON CONFLICT DO NOTHING`);

    // Nodes and node translations have no foreign keys: they go with their versions' partitions.
    await q.query(`
      SELECT tree_nodes_drop_partition(v.id) FROM tree_versions v JOIN trees t ON t.id = v.tree_id
       WHERE t.instance_id <> ${nil}`);
    await q.query(`
      DELETE FROM tree_node_translations nt USING tree_versions v, trees t
       WHERE nt.tree_version_id = v.id AND v.tree_id = t.id AND t.instance_id <> ${nil}`);
    await q.query(`DELETE FROM trees WHERE instance_id <> ${nil}`);
    await q.query(`ALTER TABLE trees DROP CONSTRAINT uq_trees_code`);
    await q.query(`ALTER TABLE trees DROP COLUMN instance_id`);
    await q.query(`ALTER TABLE trees ADD CONSTRAINT uq_trees_code UNIQUE (code)`);
  }
}

/** `tree_create_node` finding the tree by (instance, code), as this migration creates it. Frozen text. */
const CREATE_NODE_FN_INSTANCES = `
      CREATE FUNCTION tree_create_node(p_instance uuid, p_tree_code text, p_version text, p_code text, p_name text,
                                       p_description text, p_metadata jsonb, p_parent_id uuid, p_actor uuid)
        RETURNS SETOF tree_nodes
        LANGUAGE plpgsql VOLATILE
        AS $fn$
      DECLARE
        v_id uuid;
        v_tree uuid;
        v_label integer;
        v_parent tree_nodes%ROWTYPE;
      BEGIN
        UPDATE tree_versions v SET next_label = v.next_label + 1, node_count = v.node_count + 1
          FROM trees t
         WHERE t.id = v.tree_id AND t.instance_id = p_instance AND t.code = p_tree_code AND v.version = p_version
           AND v.next_label < 2147483646
        RETURNING v.id, v.tree_id, v.next_label INTO v_id, v_tree, v_label;
        IF v_id IS NULL THEN
          IF NOT EXISTS (SELECT 1 FROM trees WHERE instance_id = p_instance AND code = p_tree_code) THEN
            RAISE EXCEPTION USING ERRCODE = 'GH404', MESSAGE = format('Tree ''%s'' not found', p_tree_code);
          END IF;
          IF NOT EXISTS (SELECT 1 FROM trees t JOIN tree_versions v ON v.tree_id = t.id
                          WHERE t.instance_id = p_instance AND t.code = p_tree_code AND v.version = p_version) THEN
            RAISE EXCEPTION USING ERRCODE = 'GH404',
              MESSAGE = format('Version ''%s'' of tree ''%s'' not found', p_version, p_tree_code);
          END IF;
          RAISE EXCEPTION USING ERRCODE = 'GH409',
            MESSAGE = 'This version has used up its node labels; clone it to a new version to continue';
        END IF;

        IF p_parent_id IS NULL THEN
          RETURN QUERY
            INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, description, metadata, depth, leaf,
                                    parent_id, path, created_by, updated_by)
            VALUES (tree_node_id(v_id, v_label), v_tree, v_id, p_code, p_name, p_description, p_metadata, 0, true,
                    NULL, int4send(v_label), p_actor, p_actor)
            RETURNING *;
          RETURN;
        END IF;

        SELECT * INTO v_parent FROM tree_nodes WHERE tree_version_id = v_id AND id = p_parent_id;
        IF v_parent.id IS NULL THEN
          IF tree_node_version(p_parent_id) IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'GH400', MESSAGE = format('parent_id %s belongs to another tree version', p_parent_id);
          END IF;
          RAISE EXCEPTION USING ERRCODE = 'GH400', MESSAGE = format('parent_id %s is not a node of this version', p_parent_id);
        END IF;
        IF v_parent.leaf THEN
          UPDATE tree_nodes SET leaf = false WHERE tree_version_id = v_id AND id = v_parent.id;
        END IF;
        RETURN QUERY
          INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, description, metadata, depth, leaf,
                                  parent_id, path, created_by, updated_by)
          VALUES (tree_node_id(v_id, v_label), v_tree, v_id, p_code, p_name, p_description, p_metadata,
                  v_parent.depth + 1, true, v_parent.id, v_parent.path || int4send(v_label), p_actor, p_actor)
          RETURNING *;
      END
      $fn$`;
