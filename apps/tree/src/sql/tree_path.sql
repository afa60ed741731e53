CREATE OR REPLACE FUNCTION public.tree_path(labels integer[])
 RETURNS bytea
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT coalesce(string_agg(int4send(l), ''::bytea ORDER BY o), ''::bytea)
                FROM unnest(labels) WITH ORDINALITY AS u(l, o) $function$
