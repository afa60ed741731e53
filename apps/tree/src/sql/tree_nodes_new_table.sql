CREATE OR REPLACE FUNCTION public.tree_nodes_new_table(version_id uuid)
 RETURNS text
 LANGUAGE plpgsql
 STRICT
AS $function$
      DECLARE t text := tree_nodes_partition(version_id);
      BEGIN
        EXECUTE format('CREATE TABLE %I (LIKE tree_nodes INCLUDING DEFAULTS INCLUDING CONSTRAINTS,'
                       ' CONSTRAINT %I CHECK (tree_version_id = %L::uuid))', t, t || '_bound', version_id);
        RETURN t;
      END
      $function$
