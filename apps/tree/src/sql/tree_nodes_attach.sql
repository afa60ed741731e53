CREATE OR REPLACE FUNCTION public.tree_nodes_attach(version_id uuid)
 RETURNS void
 LANGUAGE plpgsql
 STRICT
AS $function$
      DECLARE t text := tree_nodes_partition(version_id);
      BEGIN
        EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (tree_version_id, id),'
                       ' ADD CONSTRAINT %I UNIQUE (tree_version_id, code), ADD CONSTRAINT %I UNIQUE (tree_version_id, path)',
                       t, t || '_pkey', t || '_code_key', t || '_path_key');
        EXECUTE format('CREATE INDEX %I ON %I (parent_id) WITH (deduplicate_items = off)', t || '_parent_idx', t);
        EXECUTE format('CREATE INDEX %I ON %I (tree_version_id, depth) WITH (deduplicate_items = off)',
                       t || '_depth_idx', t);
        EXECUTE format('ALTER TABLE tree_nodes ATTACH PARTITION %I FOR VALUES IN (%L)', t, version_id);
      END
      $function$
