CREATE OR REPLACE FUNCTION public.tree_nodes_add_partition(version_id uuid)
 RETURNS void
 LANGUAGE plpgsql
 STRICT
AS $function$
      BEGIN
        PERFORM tree_nodes_new_table(version_id);
        PERFORM tree_nodes_attach(version_id);
      END
      $function$
