CREATE OR REPLACE FUNCTION public.tree_create_node(p_instance uuid, p_tree_code text, p_version text, p_code text, p_name text, p_description text, p_metadata jsonb, p_parent_id uuid, p_actor uuid)
 RETURNS SETOF tree_nodes
 LANGUAGE plpgsql
AS $function$
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
      $function$
