CREATE OR REPLACE FUNCTION public.tree_nodes_attach(version_id uuid)
 RETURNS void
 LANGUAGE plpgsql
 STRICT
AS $function$
      DECLARE t text := tree_nodes_partition(version_id);
      BEGIN
        EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (tree_version_id, id)', t, t || '_pkey');
        EXECUTE format('CREATE UNIQUE INDEX %I ON %I (code)', t || '_code_key', t);
        EXECUTE format('CREATE INDEX %I ON %I (path)', t || '_path_idx', t);
        EXECUTE format('CREATE INDEX %I ON %I (parent_id) WITH (deduplicate_items = off)', t || '_parent_idx', t);
        EXECUTE format('CREATE INDEX %I ON %I (depth) WITH (deduplicate_items = off)', t || '_depth_idx', t);
        EXECUTE format('ALTER TABLE tree_nodes ATTACH PARTITION %I FOR VALUES IN (%L)', t, version_id);
      END
      $function$
