CREATE OR REPLACE FUNCTION public.tree_version_levels(version_id uuid)
 RETURNS integer
 LANGUAGE plpgsql
 STABLE STRICT
AS $function$
      DECLARE
        n integer;
      BEGIN
        IF to_regclass(quote_ident(tree_nodes_partition(version_id))) IS NULL THEN
          RETURN 0;
        END IF;
        EXECUTE format('SELECT coalesce(max(depth) + 1, 0) FROM %I WHERE tree_version_id = $1',
                       tree_nodes_partition(version_id))
          INTO n USING version_id;
        RETURN n;
      END
      $function$
