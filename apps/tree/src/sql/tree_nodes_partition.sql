CREATE OR REPLACE FUNCTION public.tree_nodes_partition(version_id uuid)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT 'tree_nodes_' || replace(version_id::text, '-', '') $function$
