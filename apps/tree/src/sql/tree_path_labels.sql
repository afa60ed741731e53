CREATE OR REPLACE FUNCTION public.tree_path_labels(path bytea)
 RETURNS integer[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT coalesce(array_agg((get_byte(path, i) << 24) | (get_byte(path, i + 1) << 16)
                                        | (get_byte(path, i + 2) << 8) | get_byte(path, i + 3) ORDER BY i),
                              '{}'::integer[])
                FROM generate_series(0, length(path) - 4, 4) AS i $function$
