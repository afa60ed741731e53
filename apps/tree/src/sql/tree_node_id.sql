CREATE OR REPLACE FUNCTION public.tree_node_id(version_id uuid, label integer)
 RETURNS uuid
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT (left(version_id::text, 24) || lpad(to_hex(label), 12, '0'))::uuid $function$
