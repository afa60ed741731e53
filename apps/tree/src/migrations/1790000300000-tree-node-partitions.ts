import type { MigrationInterface, QueryRunner } from 'typeorm';
import { TreeCreateNode1790000200000 } from './1790000200000-tree-create-node.js';

/** The columns of tree_nodes, the same before and after this migration (only keys and partitioning change). */
const NODE_COLUMNS = `
        id uuid NOT NULL,
        tree_id uuid NOT NULL,
        tree_version_id uuid NOT NULL,
        code text NOT NULL,
        name text NOT NULL,
        description text,
        metadata jsonb NOT NULL DEFAULT '{}',
        depth integer NOT NULL,
        leaf boolean NOT NULL DEFAULT true,
        parent_id uuid,
        path integer[] NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_by uuid,
        updated_at timestamptz NOT NULL DEFAULT now()`;

/**
 * `tree_nodes` becomes a table partitioned by LIST (tree_version_id): one partition per version, named
 * `tree_nodes_<version id without dashes>` (`tree_nodes_partition(version)`). Why: copying a version row by row into
 * a table with five indexes wrote six WAL records per row (heap + every index) and took 30 s for 1.1 M nodes. A
 * version's partition is now filled while it is a standalone table without indexes, then indexed by sorted builds
 * and attached (`tree_nodes_copy_version`): about 2.5x faster, and deleting a version is `DROP TABLE` of its
 * partition instead of a million-row DELETE.
 *
 * - The primary key is `(tree_version_id, id)` (a partitioned table's unique constraints must contain the partition
 *   key); the unique constraints `(tree_version_id, code)` and `(tree_version_id, path)`, the CHECK on depth and the
 *   indexes `(parent_id)` and `(tree_version_id, depth)` are those of the parent and so of every partition; the
 *   last two without deduplication (cheaper to maintain when a move rewrites thousands of rows).
 * - Every query on tree_nodes names its version (`tree_version_id = ...`), so the planner prunes to one partition.
 *   A node id alone finds its version through `tree_node_version(id)`: ids are `tree_node_id(version, label)`, whose
 *   first 24 hex digits are the version id's. A query correlated with tree_versions (one version per row) cannot be
 *   pruned when it is planned and would plan every partition (200 ms with 2,000 versions): version records get
 *   their `levels` from `tree_version_levels(id)`, which reads the version's partition by name.
 * - A version has its partition from its creation on (`tree_nodes_add_partition`, empty); a clone creates it filled
 *   (`tree_nodes_copy_version`); `tree_nodes_drop_partition` deletes it with its version. A partition is created as a
 *   standalone table with a CHECK matching its bound and then attached (ATTACH takes a SHARE UPDATE EXCLUSIVE lock on
 *   tree_nodes, not the ACCESS EXCLUSIVE lock of CREATE TABLE ... PARTITION OF, and the CHECK spares it the
 *   validation scan); the indexes built on it beforehand are adopted by the parent's. Dropping a partition takes an
 *   ACCESS EXCLUSIVE lock on tree_nodes until the deleting transaction commits.
 * - There is no default partition: a row for a version without a partition is refused.
 * - `tree_create_node` is recreated: it looks the parent up in the version's partition.
 * - tree_node_translations stays one table (no bulk copy of it is large enough to matter yet).
 *
 * Existing rows are moved into their version's partition (one per distinct tree_version_id, including rows whose
 * version row is gone, so nothing is lost); `down()` moves them back into one table.
 */
export class TreeNodePartitions1790000300000 implements MigrationInterface {
  name = 'TreeNodePartitions1790000300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION tree_create_node(text, text, text, text, text, jsonb, uuid, uuid)`);
    await q.query(`ALTER TABLE tree_nodes RENAME TO tree_nodes_unpartitioned`);
    for (const c of ['pk_tree_nodes', 'uq_tree_nodes_code', 'uq_tree_nodes_path']) {
      await q.query(`ALTER TABLE tree_nodes_unpartitioned RENAME CONSTRAINT ${c} TO ${c}_old`);
    }
    await q.query(`ALTER INDEX ix_tree_nodes_parent RENAME TO ix_tree_nodes_parent_old`);
    await q.query(`ALTER INDEX ix_tree_nodes_depth RENAME TO ix_tree_nodes_depth_old`);

    await q.query(`
      CREATE TABLE tree_nodes (
        ${NODE_COLUMNS},
        CONSTRAINT pk_tree_nodes PRIMARY KEY (tree_version_id, id),
        CONSTRAINT uq_tree_nodes_code UNIQUE (tree_version_id, code),
        CONSTRAINT uq_tree_nodes_path UNIQUE (tree_version_id, path),
        CONSTRAINT ck_tree_nodes_depth CHECK (depth >= 0 AND depth = cardinality(path) - 1)
      ) PARTITION BY LIST (tree_version_id)`);
    // No deduplication in the two non-unique indexes: every moved row inserts a new entry for a key that already
    // has several (siblings share parent_id, a level shares depth), and splitting posting lists cost about 15% of
    // a move's CPU in a measurement on an 11,111-node subtree; the indexes are somewhat larger instead.
    await q.query(
      `CREATE INDEX ix_tree_nodes_parent ON tree_nodes (parent_id) WITH (deduplicate_items = off)`,
    );
    await q.query(
      `CREATE INDEX ix_tree_nodes_depth ON tree_nodes (tree_version_id, depth) WITH (deduplicate_items = off)`,
    );

    await q.query(`
      CREATE FUNCTION tree_nodes_partition(version_id uuid) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS $$ SELECT 'tree_nodes_' || replace(version_id::text, '-', '') $$`);
    // A standalone table shaped like tree_nodes, with a CHECK matching the partition bound; no indexes yet.
    await q.query(`
      CREATE FUNCTION tree_nodes_new_table(version_id uuid) RETURNS text
        LANGUAGE plpgsql VOLATILE STRICT
        AS $fn$
      DECLARE t text := tree_nodes_partition(version_id);
      BEGIN
        EXECUTE format('CREATE TABLE %I (LIKE tree_nodes INCLUDING DEFAULTS INCLUDING CONSTRAINTS,'
                       ' CONSTRAINT %I CHECK (tree_version_id = %L::uuid))', t, t || '_bound', version_id);
        RETURN t;
      END
      $fn$`);
    // Sorted index builds on the filled table (as constraints, so the parent's constraint indexes adopt them),
    // then ATTACH: the CHECK proves the bound, so there is no validation scan.
    await q.query(`
      CREATE FUNCTION tree_nodes_attach(version_id uuid) RETURNS void
        LANGUAGE plpgsql VOLATILE STRICT
        AS $fn$
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
      $fn$`);
    await q.query(`
      CREATE FUNCTION tree_nodes_add_partition(version_id uuid) RETURNS void
        LANGUAGE plpgsql VOLATILE STRICT
        AS $fn$
      BEGIN
        PERFORM tree_nodes_new_table(version_id);
        PERFORM tree_nodes_attach(version_id);
      END
      $fn$`);
    await q.query(`
      CREATE FUNCTION tree_nodes_drop_partition(version_id uuid) RETURNS void
        LANGUAGE plpgsql VOLATILE STRICT
        AS $fn$
      BEGIN
        EXECUTE format('DROP TABLE IF EXISTS %I', tree_nodes_partition(version_id));
      END
      $fn$`);
    // Clone: the copies' ids and parent ids are computed from the copied labels, so it is one INSERT ... SELECT into
    // the new version's table while it has no index; then indexes and ATTACH. Returns the number of nodes copied.
    await q.query(COPY_VERSION_FN_INT_PATHS);
    // The version holding a node id (ids are tree_node_id(version, label)); NULL when no version has that node.
    // Dynamic SQL: each probe is planned with the version id as a constant, so it prunes to one partition (a join
    // on tree_versions would put every partition into the plan).
    await q.query(`
      CREATE FUNCTION tree_node_version(node_id uuid) RETURNS uuid
        LANGUAGE plpgsql STABLE STRICT
        AS $fn$
      DECLARE
        v uuid;
        hit boolean;
      BEGIN
        FOR v IN SELECT id FROM tree_versions
                  WHERE id BETWEEN (left(node_id::text, 24) || '000000000000')::uuid
                               AND (left(node_id::text, 24) || 'ffffffffffff')::uuid LOOP
          EXECUTE 'SELECT EXISTS (SELECT 1 FROM tree_nodes WHERE tree_version_id = $1 AND id = $2)'
            INTO hit USING v, node_id;
          IF hit THEN
            RETURN v;
          END IF;
        END LOOP;
        RETURN NULL;
      END
      $fn$`);
    // A version's depth levels (max depth + 1, 0 when empty) from its own partition's depth index; for version
    // records, where a subquery correlated with tree_versions.id would plan every partition.
    await q.query(`
      CREATE FUNCTION tree_version_levels(version_id uuid) RETURNS integer
        LANGUAGE plpgsql STABLE STRICT
        AS $fn$
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
      $fn$`);

    // Existing rows: one partition per version (and per orphaned tree_version_id), filled, indexed, attached.
    const versions: { id: string }[] = await q.query(
      `SELECT id FROM tree_versions UNION SELECT DISTINCT tree_version_id FROM tree_nodes_unpartitioned`,
    );
    for (const { id } of versions) {
      const [{ t }]: { t: string }[] = await q.query(`SELECT tree_nodes_new_table($1) AS t`, [id]);
      await q.query(`INSERT INTO "${t}" SELECT * FROM tree_nodes_unpartitioned WHERE tree_version_id = $1`, [
        id,
      ]);
      await q.query(`SELECT tree_nodes_attach($1)`, [id]);
    }
    await q.query(`DROP TABLE tree_nodes_unpartitioned`);

    await q.query(CREATE_NODE_FN_INT_PATHS);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION tree_create_node(text, text, text, text, text, jsonb, uuid, uuid)`);
    await q.query(`ALTER TABLE tree_nodes RENAME TO tree_nodes_partitioned`);
    for (const c of ['pk_tree_nodes', 'uq_tree_nodes_code', 'uq_tree_nodes_path', 'ck_tree_nodes_depth']) {
      await q.query(`ALTER TABLE tree_nodes_partitioned RENAME CONSTRAINT ${c} TO ${c}_part`);
    }
    await q.query(`ALTER INDEX ix_tree_nodes_parent RENAME TO ix_tree_nodes_parent_part`);
    await q.query(`ALTER INDEX ix_tree_nodes_depth RENAME TO ix_tree_nodes_depth_part`);
    await q.query(`
      CREATE TABLE tree_nodes (
        ${NODE_COLUMNS},
        CONSTRAINT pk_tree_nodes PRIMARY KEY (id),
        CONSTRAINT uq_tree_nodes_code UNIQUE (tree_version_id, code),
        CONSTRAINT uq_tree_nodes_path UNIQUE (tree_version_id, path),
        CONSTRAINT ck_tree_nodes_depth CHECK (depth >= 0 AND depth = cardinality(path) - 1)
      )`);
    await q.query(`INSERT INTO tree_nodes SELECT * FROM tree_nodes_partitioned`);
    await q.query(`CREATE INDEX ix_tree_nodes_parent ON tree_nodes (parent_id)`);
    await q.query(`CREATE INDEX ix_tree_nodes_depth ON tree_nodes (tree_version_id, depth)`);
    await q.query(`DROP TABLE tree_nodes_partitioned`); // with its partitions
    await q.query(`DROP FUNCTION tree_version_levels(uuid)`);
    await q.query(`DROP FUNCTION tree_node_version(uuid)`);
    await q.query(`DROP FUNCTION tree_nodes_copy_version(uuid, uuid, uuid, uuid)`);
    await q.query(`DROP FUNCTION tree_nodes_drop_partition(uuid)`);
    await q.query(`DROP FUNCTION tree_nodes_add_partition(uuid)`);
    await q.query(`DROP FUNCTION tree_nodes_attach(uuid)`);
    await q.query(`DROP FUNCTION tree_nodes_new_table(uuid)`);
    await q.query(`DROP FUNCTION tree_nodes_partition(uuid)`);
    await new TreeCreateNode1790000200000().up(q);
  }
}

/**
 * `tree_nodes_copy_version` on integer-array paths, as this migration created it (replaced by 1790000400000, whose
 * down() restores it). Frozen text: a later change to the function is a new migration.
 */
export const COPY_VERSION_FN_INT_PATHS = `
      CREATE FUNCTION tree_nodes_copy_version(source_id uuid, target_id uuid, target_tree_id uuid, actor_id uuid)
        RETURNS bigint
        LANGUAGE plpgsql VOLATILE
        AS $fn$
      DECLARE
        t text := tree_nodes_new_table(target_id);
        n bigint;
      BEGIN
        EXECUTE format(
          'INSERT INTO %I (id, tree_id, tree_version_id, code, name, description, metadata, depth, leaf, parent_id,'
          '                path, enabled, created_by, updated_by)'
          ' SELECT tree_node_id($2, s.path[cardinality(s.path)]), $3, $2, s.code, s.name, s.description, s.metadata,'
          '        s.depth, s.leaf,'
          '        CASE WHEN s.parent_id IS NULL THEN NULL ELSE tree_node_id($2, s.path[cardinality(s.path) - 1]) END,'
          '        s.path, s.enabled, $4, $4'
          '   FROM tree_nodes s WHERE s.tree_version_id = $1', t)
          USING source_id, target_id, target_tree_id, actor_id;
        GET DIAGNOSTICS n = ROW_COUNT;
        PERFORM tree_nodes_attach(target_id);
        RETURN n;
      END
      $fn$`;

/**
 * `tree_create_node` on integer-array paths, as this migration created it (replaced by 1790000400000, whose down()
 * restores it). Frozen text.
 */
export const CREATE_NODE_FN_INT_PATHS = `
      CREATE FUNCTION tree_create_node(p_tree_code text, p_version text, p_code text, p_name text, p_description text,
                                       p_metadata jsonb, p_parent_id uuid, p_actor uuid)
        RETURNS SETOF tree_nodes
        LANGUAGE plpgsql VOLATILE
        AS $fn$
      DECLARE
        v_id uuid;
        v_tree uuid;
        v_label integer;
        v_parent tree_nodes%ROWTYPE;
      BEGIN
        UPDATE tree_versions v SET next_label = v.next_label + 1, node_count = v.node_count + 1
          FROM trees t
         WHERE t.id = v.tree_id AND t.code = p_tree_code AND v.version = p_version AND v.next_label < 2147483646
        RETURNING v.id, v.tree_id, v.next_label INTO v_id, v_tree, v_label;
        IF v_id IS NULL THEN
          IF NOT EXISTS (SELECT 1 FROM trees WHERE code = p_tree_code) THEN
            RAISE EXCEPTION USING ERRCODE = 'GH404', MESSAGE = format('Tree ''%s'' not found', p_tree_code);
          END IF;
          IF NOT EXISTS (SELECT 1 FROM trees t JOIN tree_versions v ON v.tree_id = t.id
                          WHERE t.code = p_tree_code AND v.version = p_version) THEN
            RAISE EXCEPTION USING ERRCODE = 'GH404',
              MESSAGE = format('Version ''%s'' of tree ''%s'' not found', p_version, p_tree_code);
          END IF;
          RAISE EXCEPTION USING ERRCODE = 'GH409',
            MESSAGE = 'This version has used up its node labels; clone it to a new version to continue';
        END IF;

        IF p_parent_id IS NULL THEN
          RETURN QUERY
            INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, description, metadata, depth, leaf,
                                    parent_id, path, created_by, updated_by)
            VALUES (tree_node_id(v_id, v_label), v_tree, v_id, p_code, p_name, p_description, p_metadata, 0, true,
                    NULL, ARRAY[v_label], p_actor, p_actor)
            RETURNING *;
          RETURN;
        END IF;

        SELECT * INTO v_parent FROM tree_nodes WHERE tree_version_id = v_id AND id = p_parent_id;
        IF v_parent.id IS NULL THEN
          IF tree_node_version(p_parent_id) IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'GH400', MESSAGE = format('parent_id %s belongs to another tree version', p_parent_id);
          END IF;
          RAISE EXCEPTION USING ERRCODE = 'GH400', MESSAGE = format('parent_id %s is not a node of this version', p_parent_id);
        END IF;
        IF v_parent.leaf THEN
          UPDATE tree_nodes SET leaf = false WHERE tree_version_id = v_id AND id = v_parent.id;
        END IF;
        RETURN QUERY
          INSERT INTO tree_nodes (id, tree_id, tree_version_id, code, name, description, metadata, depth, leaf,
                                  parent_id, path, created_by, updated_by)
          VALUES (tree_node_id(v_id, v_label), v_tree, v_id, p_code, p_name, p_description, p_metadata,
                  cardinality(v_parent.path), true, v_parent.id, v_parent.path || v_label, p_actor, p_actor)
          RETURNING *;
      END
      $fn$`;
