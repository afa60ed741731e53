CREATE OR REPLACE FUNCTION public.tree_node_version(node_id uuid)
 RETURNS uuid
 LANGUAGE plpgsql
 STABLE STRICT
AS $function$
      DECLARE
        v uuid;
        hit boolean;
      BEGIN
        FOR v IN SELECT id FROM tree_versions
                  WHERE id BETWEEN (left(node_id::text, 24) || '000000000000')::uuid
                               AND (left(node_id::text, 24) || 'ffffffffffff')::uuid LOOP
          EXECUTE 'SELECT EXISTS (SELECT 1 FROM tree_nodes WHERE tree_version_id = $1 AND id = $2)'
            INTO hit USING v, node_id;
          IF hit THEN
            RETURN v;
          END IF;
        END LOOP;
        RETURN NULL;
      END
      $function$
