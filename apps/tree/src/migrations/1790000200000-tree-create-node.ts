import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `tree_create_node(...)`: creating a node in one round trip. It runs the same steps the service would run as a
 * transaction of four statements: lock the version row while handing out the label, then (a new statement, so a
 * snapshot taken after the lock: a concurrent move has committed or not started) read the parent, mark it non-leaf
 * and insert. Errors carry our SQLSTATEs: GH404 (tree or version missing), GH400 (bad parent_id), GH409 (labels
 * used up); a duplicate code is the unique violation of uq_tree_nodes_code.
 */
export class TreeCreateNode1790000200000 implements MigrationInterface {
  name = 'TreeCreateNode1790000200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION tree_create_node(p_tree_code text, p_version text, p_code text, p_name text, p_description text,
                                       p_metadata jsonb, p_parent_id uuid, p_actor uuid)
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
         WHERE t.id = v.tree_id AND t.code = p_tree_code AND v.version = p_version AND v.next_label < 2147483646
        RETURNING v.id, v.tree_id, v.next_label INTO v_id, v_tree, v_label;
        IF v_id IS NULL THEN
          IF NOT EXISTS (SELECT 1 FROM trees WHERE code = p_tree_code) THEN
            RAISE EXCEPTION USING ERRCODE = 'GH404', MESSAGE = format('Tree ''%s'' not found', p_tree_code);
          END IF;
          IF NOT EXISTS (SELECT 1 FROM trees t JOIN tree_versions v ON v.tree_id = t.id
                          WHERE t.code = p_tree_code AND v.version = p_version) THEN
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
                    NULL, ARRAY[v_label], p_actor, p_actor)
            RETURNING *;
          RETURN;
        END IF;

        SELECT * INTO v_parent FROM tree_nodes WHERE id = p_parent_id;
        IF v_parent.id IS NULL THEN
          RAISE EXCEPTION USING ERRCODE = 'GH400', MESSAGE = format('parent_id %s is not a node of this version', p_parent_id);
        END IF;
        IF v_parent.tree_version_id <> v_id THEN
          RAISE EXCEPTION USING ERRCODE = 'GH400', MESSAGE = format('parent_id %s belongs to another tree version', p_parent_id);
        END IF;
        IF v_parent.leaf THEN
          UPDATE tree_nodes SET leaf = false WHERE id = v_parent.id;
        END IF;
        RETURN QUERY
          INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, description, metadata, depth, leaf,
                                  parent_id, path, created_by, updated_by)
          VALUES (tree_node_id(v_id, v_label), v_tree, v_id, p_code, p_name, p_description, p_metadata,
                  cardinality(v_parent.path), true, v_parent.id, v_parent.path || v_label, p_actor, p_actor)
          RETURNING *;
      END
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION tree_create_node(text, text, text, text, text, jsonb, uuid, uuid)`);
  }
}
