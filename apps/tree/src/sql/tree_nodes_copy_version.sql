CREATE OR REPLACE FUNCTION public.tree_nodes_copy_version(source_id uuid, target_id uuid, target_tree_id uuid, actor_id uuid)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
      DECLARE
        t text := tree_nodes_new_table(target_id);
        n bigint;
      BEGIN
        EXECUTE format(
          'INSERT INTO %I (id, tree_id, tree_version_id, code, name, description, metadata, depth, leaf, parent_id,'
          '                path, enabled, created_by, updated_by)'
          ' SELECT tree_path_node_id($2, s.path), $3, $2, s.code, s.name, s.description, s.metadata,'
          '        s.depth, s.leaf,'
          '        CASE WHEN s.parent_id IS NULL THEN NULL ELSE tree_path_node_id($2, substring(s.path for length(s.path) - 4)) END,'
          '        s.path, s.enabled, $4, $4'
          '   FROM tree_nodes s WHERE s.tree_version_id = $1', t)
          USING source_id, target_id, target_tree_id, actor_id;
        GET DIAGNOSTICS n = ROW_COUNT;
        PERFORM tree_nodes_attach(target_id);
        RETURN n;
      END
      $function$
