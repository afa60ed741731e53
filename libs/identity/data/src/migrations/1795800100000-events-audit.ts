import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The management tables whose writes are recorded as `mgmt.created` / `mgmt.updated` / `mgmt.deleted` events
 * (docs/events.md "Management writes"): the table, its record type, the columns naming the user and the client the
 * event is about, the tenant column (default `tenant_id`), the columns a link row's created/deleted event repeats
 * in `details.record`, and the columns whose change alone is no change of the record (flags kept by the service).
 * Operational tables (oidc_payloads, signing_keys, login_failures, otp_*, delivery_outbox, signup_counters,
 * cache_subscribers, bootstrap_markers, events) and derived ones (group_closure) are not audited.
 */
export const AUDITED_TABLES: {
  table: string;
  recordType: string;
  user?: string;
  client?: string;
  tenant?: string;
  record?: string[];
  ignore?: string[];
}[] = [
  { table: 'instances', recordType: 'instance', tenant: '' },
  { table: 'instance_admins', recordType: 'instance_admin', user: 'user_id', record: ['user_id'] },
  { table: 'tenants', recordType: 'tenant', tenant: 'id' },
  { table: 'tenant_admins', recordType: 'tenant_admin', user: 'user_id', record: ['user_id'] },
  { table: 'tenant_identity_providers', recordType: 'identity_provider' },
  // The delivery worker's own updates (cursor, lease, failures) carry no audit context and record nothing.
  {
    table: 'log_streams',
    recordType: 'log_stream',
    ignore: ['cursor_txid', 'cursor_seq', 'lease_until', 'next_attempt_at'],
  },
  { table: 'clients', recordType: 'client', client: 'id' },
  {
    table: 'client_resources',
    recordType: 'client_resource',
    client: 'client_id',
    record: ['client_id', 'resource_id'],
  },
  {
    table: 'client_permissions',
    recordType: 'client_permission',
    client: 'client_id',
    record: ['client_id', 'resource_id', 'scope_id'],
  },
  { table: 'resources', recordType: 'resource', ignore: ['scopes_added'] },
  { table: 'scopes', recordType: 'scope', record: ['resource_id'] },
  { table: 'users', recordType: 'user', user: 'id' },
  { table: 'user_identities', recordType: 'user_identity', user: 'user_id', record: ['user_id'] },
  { table: 'user_roles', recordType: 'user_role', user: 'user_id', record: ['user_id', 'role_id'] },
  {
    table: 'user_permissions',
    recordType: 'user_permission',
    user: 'user_id',
    record: ['user_id', 'resource_id', 'scope_id'],
  },
  { table: 'roles', recordType: 'role' },
  {
    table: 'role_permissions',
    recordType: 'role_permission',
    record: ['role_id', 'resource_id', 'scope_id'],
  },
  { table: 'groups', recordType: 'group' },
  { table: 'group_members', recordType: 'group_member', user: 'user_id', record: ['group_id', 'user_id'] },
  { table: 'group_roles', recordType: 'group_role', record: ['group_id', 'role_id'] },
  { table: 'group_children', recordType: 'group_child', record: ['parent_id', 'child_id'] },
  {
    table: 'tickets',
    recordType: 'ticket',
    user: 'user_id',
    client: 'client_id',
    record: ['user_id', 'kind'],
  },
];

/**
 * Management writes recorded in their own transaction by a row trigger on every management table
 * (`events_audit`): one `events` row per record created, changed or deleted, written only when the transaction
 * carries an audit context (`gatehouse.audit`, a JSON the identity service sets with `set_config(..., true)` at
 * BEGIN: actor, via client, ip, user agent, instance, tenant). Writes without one (the token server's last login
 * and lockout counters, sign-ups, a manual SQL session) record nothing here; the token server records its own
 * events. Rows deleted or changed by a foreign key's action (ON DELETE CASCADE / SET NULL: the parent they
 * referred to is gone) record nothing, nor rows written by another trigger (depth > 1): deleting a client is one
 * event, not one per permission. An UPDATE that changed nothing but `updated_at`/`updated_by` (or an ignored flag)
 * records nothing. A secret or hash column (`*_enc`, `*_hash`, `*password`, `*secret`) is only ever `"changed"`,
 * under its name without the `_enc`/`_hash` suffix (`client_secret`, `password`).
 *
 * TG_ARGV: record type, user column, client column, tenant column, record columns (comma list), ignored columns
 * (comma list); '' for none.
 */
export class EventsAudit1795800100000 implements MigrationInterface {
  name = 'EventsAudit1795800100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION events_audit() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE
        ctx_text text := current_setting('gatehouse.audit', true);
        ctx jsonb;
        rec jsonb;
        before jsonb;
        changes jsonb := '{}'::jsonb;
        details jsonb := '{}'::jsonb;
        ignored text[];
        k text;
        v jsonb;
        typ text;
        at timestamptz;
        fk record;
        cond text;
        referenced boolean;
        moved boolean;
        gone boolean;
        nulled boolean := false;
      BEGIN
        IF ctx_text IS NULL OR ctx_text = '' OR pg_trigger_depth() > 1 THEN
          RETURN NULL;
        END IF;
        IF TG_OP <> 'INSERT' THEN
          before := to_jsonb(OLD);
        END IF;
        IF TG_OP = 'UPDATE' THEN
          rec := to_jsonb(NEW);
          ignored := ARRAY['updated_at', 'updated_by'] || string_to_array(nullif(TG_ARGV[5], ''), ',');
          FOR k, v IN SELECT * FROM jsonb_each(rec) LOOP
            CONTINUE WHEN k = ANY (ignored) OR before -> k IS NOT DISTINCT FROM v;
            IF k ~ '(_enc|_hash)$' OR k ~ '(^|_)(password|secret)$' THEN
              changes := changes || jsonb_build_object(regexp_replace(k, '_(enc|hash)$', ''), 'changed');
            ELSE
              changes := changes || jsonb_build_object(k, jsonb_build_object('old', before -> k, 'new', v));
            END IF;
            nulled := nulled OR v = 'null'::jsonb;
          END LOOP;
          IF changes = '{}'::jsonb THEN
            RETURN NULL;
          END IF;
          typ := 'mgmt.updated';
          details := jsonb_build_object('changes', changes);
        ELSE
          IF TG_OP = 'INSERT' THEN
            rec := to_jsonb(NEW);
            typ := 'mgmt.created';
          ELSE
            rec := to_jsonb(OLD);
            typ := 'mgmt.deleted';
          END IF;
          IF TG_ARGV[4] <> '' THEN
            SELECT jsonb_build_object('record', jsonb_object_agg(c, rec -> c))
              INTO details FROM unnest(string_to_array(TG_ARGV[4], ',')) c;
          END IF;
        END IF;
        -- A row deleted (or its reference set to null) by a foreign key's action on its parent: the parent's own
        -- event stands for it. The actions' AFTER triggers fire at the end of the parent's statement, at the same
        -- depth, so the test is whether the parent the row referred to is gone (catalog look-ups only for a
        -- DELETE or an UPDATE that set a column to null).
        IF TG_OP = 'DELETE' OR nulled THEN
          FOR fk IN
            SELECT c.confrelid::regclass AS parent,
                   array_agg(a.attname ORDER BY fkc.n) AS cols,
                   array_agg(pa.attname ORDER BY fkc.n) AS pcols,
                   array_agg(format_type(pa.atttypid, pa.atttypmod) ORDER BY fkc.n) AS ptypes
              FROM pg_constraint c
              CROSS JOIN LATERAL unnest(c.conkey, c.confkey) WITH ORDINALITY AS fkc(ck, pk, n)
              JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = fkc.ck
              JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = fkc.pk
             WHERE c.conrelid = TG_RELID AND c.contype = 'f' AND c.confdeltype IN ('c', 'n', 'd')
             GROUP BY c.oid, c.confrelid
          LOOP
            cond := NULL;
            referenced := true;
            moved := TG_OP = 'DELETE';
            FOR i IN 1 .. cardinality(fk.cols) LOOP
              IF before ->> fk.cols[i] IS NULL THEN
                referenced := false;
              END IF;
              IF TG_OP = 'UPDATE' AND to_jsonb(NEW) -> fk.cols[i] IS DISTINCT FROM before -> fk.cols[i] THEN
                moved := true;
              END IF;
              cond := concat_ws(' AND ', cond,
                                format('%I = %L::%s', fk.pcols[i], before ->> fk.cols[i], fk.ptypes[i]));
            END LOOP;
            CONTINUE WHEN NOT referenced OR NOT moved;
            EXECUTE format('SELECT NOT EXISTS (SELECT 1 FROM %s WHERE %s)', fk.parent, cond) INTO gone;
            IF gone THEN
              RETURN NULL;
            END IF;
          END LOOP;
        END IF;
        ctx := ctx_text::jsonb;
        at := clock_timestamp();
        INSERT INTO events (id, created_at, type, outcome, instance_id, tenant_id, actor_type, actor_id,
                            via_client_id, user_id, client_id, record_type, record_id, ip, user_agent, details)
        VALUES (events_uuid7(at), at, typ, 'success',
                coalesce((rec ->> 'instance_id')::uuid, (ctx ->> 'instance_id')::uuid),
                coalesce((rec ->> nullif(TG_ARGV[3], ''))::uuid, (ctx ->> 'tenant_id')::uuid),
                ctx ->> 'actor_type', ctx ->> 'actor_id', (ctx ->> 'via_client_id')::uuid,
                (rec ->> nullif(TG_ARGV[1], ''))::uuid, (rec ->> nullif(TG_ARGV[2], ''))::uuid,
                TG_ARGV[0], rec ->> 'id', ctx ->> 'ip', ctx ->> 'user_agent', details);
        RETURN NULL;
      END
      $fn$`);
    for (const t of AUDITED_TABLES) {
      const args = [
        t.recordType,
        t.user ?? '',
        t.client ?? '',
        t.tenant ?? 'tenant_id',
        (t.record ?? []).join(','),
        (t.ignore ?? []).join(','),
      ]
        .map((a) => `'${a}'`)
        .join(', ');
      await q.query(
        `CREATE TRIGGER tr_${t.table}_audit AFTER INSERT OR UPDATE OR DELETE ON ${t.table}
           FOR EACH ROW EXECUTE FUNCTION events_audit(${args})`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of AUDITED_TABLES) await q.query(`DROP TRIGGER tr_${t.table}_audit ON ${t.table}`);
    await q.query(`DROP FUNCTION events_audit()`);
  }
}
