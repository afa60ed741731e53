CREATE OR REPLACE FUNCTION public.tree_nodes_drop_partition(version_id uuid)
 RETURNS void
 LANGUAGE plpgsql
 STRICT
AS $function$
      BEGIN
        EXECUTE format('DROP TABLE IF EXISTS %I', tree_nodes_partition(version_id));
      END
      $function$
