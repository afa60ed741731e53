CREATE OR REPLACE FUNCTION public.tree_path_node_id(version_id uuid, path bytea)
 RETURNS uuid
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT (left(version_id::text, 24) || '0000' || encode(substring(path from length(path) - 3), 'hex'))::uuid $function$
