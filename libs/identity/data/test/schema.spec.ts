import type { DataSource } from 'typeorm';
import {
  createDataSource,
  type Db,
  pendingMigrations,
  pendingSchemaChanges,
  runMigrations,
} from '@gatehouse/db';
import { createEmptyTestDatabase, type TestDatabase } from '@gatehouse/testing';
import { identityEntities, identityMigrations } from '../src/index.js';
import { identityTestDatabase, openDb, pgCode, uniq } from './support.js';

describe('identity migrations', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const q = async <T>(text: string, params?: unknown[]) => (await ds.query(text, params)) as T[];

  beforeAll(async () => {
    db = await createEmptyTestDatabase();
    ds = createDataSource({
      url: db.url,
      entities: identityEntities,
      migrations: identityMigrations,
      poolMax: 4,
    });
    await ds.initialize();
  });
  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('apply to an empty database, leave no drift between entities and schema, and revert', async () => {
    expect(await pendingMigrations(ds)).toEqual(identityMigrations.map((m) => m.name));
    // every migration runs, in the order of their timestamps (the index lists them; a new one is not listed here)
    const names = identityMigrations.map((m) => m.name);
    const stamps = names.map((n) => Number(/(\d{13})$/.exec(n)?.[1]));
    expect(stamps.every((t, i) => Number.isFinite(t) && (i === 0 || t > stamps[i - 1]))).toBe(true);
    expect(await runMigrations(ds)).toEqual(names);
    expect(await pendingSchemaChanges(ds)).toEqual([]);

    const tables = await q<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining([
        'instances',
        'tenants',
        'clients',
        'resources',
        'scopes',
        'client_resources',
        'client_permissions',
        'users',
        'user_identities',
        'oidc_payloads',
        'signing_keys',
        'bootstrap_markers',
        'login_failures',
        'user_authenticators',
        'mfa_failures',
        'webauthn_challenges',
        'roles',
        'role_permissions',
        'user_permissions',
        'user_roles',
        'groups',
        'group_members',
        'group_roles',
        'group_children',
        'group_closure',
        'one_time_codes',
        'tenant_admins',
        'tenant_identity_providers',
        'instance_admins',
        'tickets',
        'otp_failures',
        'otp_sends',
        'delivery_outbox',
        'signup_counters',
      ]),
    );
    // Every identity record carries instance_id (artifact tables of the token server, its cache subscribers, the
    // passwordless send counts (keyed by address across instances), the delivery queue and the sign-up counters
    // (operational queues and buckets whose keys name the instance where it matters) and instances excepted).
    const withoutInstance = await q<{ table_name: string }>(
      `SELECT t.table_name FROM information_schema.tables t
        WHERE t.table_schema = 'public'
          AND t.table_name NOT IN ('instances', 'oidc_payloads', 'signing_keys', 'cache_subscribers', 'otp_sends',
                                   'delivery_outbox', 'signup_counters', 'typeorm_migrations')
          AND NOT EXISTS (SELECT 1 FROM information_schema.columns c
                           WHERE c.table_name = t.table_name AND c.column_name = 'instance_id' AND c.is_nullable = 'NO')`,
    );
    expect(withoutInstance).toEqual([]);

    // Token artifacts by user (revoking a blocked user's tokens, counting them) are found through an index.
    await ds.transaction(async (m) => {
      await m.query('SET LOCAL enable_seqscan = off');
      const plan: { 'QUERY PLAN': string }[] = await m.query(
        `EXPLAIN DELETE FROM oidc_payloads WHERE payload->>'accountId' = $1
            OR grant_id IN (SELECT id FROM oidc_payloads WHERE model = 'Grant' AND payload->>'accountId' = $1)`,
        ['someone'],
      );
      expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toContain('ix_oidc_payloads_account');
    });

    // The sparse artifact columns have partial indexes, still used by the adapter's look-ups.
    const partial = await q<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes
        WHERE tablename = 'oidc_payloads' AND indexname IN ('ix_oidc_payloads_uid', 'ix_oidc_payloads_user_code',
                                                            'ix_oidc_payloads_grant_id')
        ORDER BY 1`,
    );
    expect(partial.map((i) => [i.indexname, /WHERE \((\w+) IS NOT NULL\)$/.exec(i.indexdef)?.[1]])).toEqual([
      ['ix_oidc_payloads_grant_id', 'grant_id'],
      ['ix_oidc_payloads_uid', 'uid'],
      ['ix_oidc_payloads_user_code', 'user_code'],
    ]);
    await ds.transaction(async (m) => {
      await m.query('SET LOCAL enable_seqscan = off');
      for (const [sql, index] of [
        [`SELECT 1 FROM oidc_payloads WHERE model = 'Session' AND uid = $1`, 'ix_oidc_payloads_uid'],
        [
          `SELECT 1 FROM oidc_payloads WHERE model = 'DeviceCode' AND user_code = $1`,
          'ix_oidc_payloads_user_code',
        ],
        [`DELETE FROM oidc_payloads WHERE grant_id = $1`, 'ix_oidc_payloads_grant_id'],
      ]) {
        const plan: { 'QUERY PLAN': string }[] = await m.query(`EXPLAIN ${sql}`, ['x']);
        expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toContain(index);
      }
    });
    // New resources default to ES256.
    const [alg] = await q<{ d: string }>(
      `SELECT column_default AS d FROM information_schema.columns
        WHERE table_name = 'resources' AND column_name = 'signing_algorithm'`,
    );
    expect(alg.d).toContain('ES256');

    for (let i = 0; i < identityMigrations.length; i++) await ds.undoLastMigration();
    const left = await q(`SELECT 1 FROM information_schema.tables WHERE table_name = 'clients'`);
    expect(left).toHaveLength(0);
    await runMigrations(ds);
    expect(await pendingSchemaChanges(ds)).toEqual([]);
  });
});

describe('identity schema constraints', () => {
  let db: TestDatabase;
  let ds: Db;
  let instanceId: string;
  let otherInstanceId: string;

  const insert = async (sql: string, params: unknown[]) => (await ds.rows<{ id: string }>(sql, params))[0].id;
  const instance = () => insert(`INSERT INTO instances (name) VALUES ($1) RETURNING id`, [uniq('inst')]);
  const tenant = (inst: string) =>
    insert(`INSERT INTO tenants (instance_id, name) VALUES ($1, $2) RETURNING id`, [inst, uniq('t')]);
  const client = (inst: string, name: string, tenantId: string | null = null) =>
    insert(`INSERT INTO clients (instance_id, tenant_id, client_name) VALUES ($1, $2, $3) RETURNING id`, [
      inst,
      tenantId,
      name,
    ]);
  const resource = (inst: string, url: string | null) =>
    insert(
      `INSERT INTO resources (instance_id, resource_type, resource_name, identifier_url) VALUES ($1, 'api', 'r', $2) RETURNING id`,
      [inst, url],
    );
  const scope = (inst: string, resourceId: string, name: string) =>
    insert(`INSERT INTO scopes (instance_id, resource_id, scope_name) VALUES ($1, $2, $3) RETURNING id`, [
      inst,
      resourceId,
      name,
    ]);
  const user = (inst: string, email: string | null, userName: string | null, phone: string | null = null) =>
    insert(
      `INSERT INTO users (instance_id, user_email, user_name, phone_number) VALUES ($1, $2, $3, $4) RETURNING id`,
      [inst, email, userName, phone],
    );

  beforeAll(async () => {
    db = await identityTestDatabase();
    ds = await openDb(db.url);
    instanceId = await instance();
    otherInstanceId = await instance();
  });
  afterAll(async () => {
    await ds?.close();
    await db?.drop();
  });

  it('client names are unique per (instance, tenant), case-insensitively, global clients included', async () => {
    const t = await tenant(instanceId);
    const name = uniq('App');
    await client(instanceId, name);
    expect(await pgCode(client(instanceId, name.toLowerCase()))).toBe('23505');
    await client(instanceId, name, t); // another tenant group
    expect(await pgCode(client(instanceId, name.toUpperCase(), t))).toBe('23505');
    await client(otherInstanceId, name); // another instance
  });

  it('only one default client per instance', async () => {
    await ds.rows(`INSERT INTO clients (instance_id, client_name, is_default) VALUES ($1, $2, true)`, [
      instanceId,
      uniq('d'),
    ]);
    expect(
      await pgCode(
        ds.rows(`INSERT INTO clients (instance_id, client_name, is_default) VALUES ($1, $2, true)`, [
          instanceId,
          uniq('d'),
        ]),
      ),
    ).toBe('23505');
  });

  it('resource identifier_url is unique per instance; scope names per resource', async () => {
    const url = `https://${uniq('api')}.example`;
    const r = await resource(instanceId, url);
    expect(await pgCode(resource(instanceId, url))).toBe('23505');
    await resource(otherInstanceId, url);
    await resource(instanceId, null);
    await resource(instanceId, null); // resources without an identifier do not collide

    await scope(instanceId, r, 'read');
    expect(await pgCode(scope(instanceId, r, 'read'))).toBe('23505');
    await scope(instanceId, r, 'Read'); // OAuth scopes are case-sensitive
    const r2 = await resource(instanceId, `https://${uniq('api')}.example`);
    await scope(instanceId, r2, 'read');
  });

  it('user e-mail and user name are unique per instance case-insensitively; phone per instance', async () => {
    const email = `${uniq('u')}@Example.com`;
    const name = uniq('User');
    await user(instanceId, email, name, '+97699000001');
    expect(await pgCode(user(instanceId, email.toLowerCase(), null))).toBe('23505');
    expect(await pgCode(user(instanceId, null, name.toUpperCase()))).toBe('23505');
    expect(await pgCode(user(instanceId, null, null, '+97699000001'))).toBe('23505');
    await user(otherInstanceId, email, name, '+97699000001');
    await user(instanceId, null, null); // several users without e-mail/name/phone are fine
    await user(instanceId, null, null);
  });

  it('a permission needs the resource authorized to the client and a scope of that resource', async () => {
    const c = await client(instanceId, uniq('c'));
    const r = await resource(instanceId, `urn:${uniq('r')}`);
    const other = await resource(instanceId, `urn:${uniq('r')}`);
    const s = await scope(instanceId, r, 'a');
    const foreign = await scope(instanceId, other, 'a');
    const grant = (scopeId: string, resourceId = r) =>
      ds.rows(
        `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id) VALUES ($1, $2, $3, $4)`,
        [instanceId, c, resourceId, scopeId],
      );
    expect(await pgCode(grant(s))).toBe('23503'); // not authorized yet
    await ds.rows(`INSERT INTO client_resources (instance_id, client_id, resource_id) VALUES ($1, $2, $3)`, [
      instanceId,
      c,
      r,
    ]);
    expect(await pgCode(grant(foreign))).toBe('23503'); // scope of another resource
    await grant(s);
    expect(await pgCode(grant(s))).toBe('23505');
    expect(
      await pgCode(
        ds.rows(`INSERT INTO client_resources (instance_id, client_id, resource_id) VALUES ($1, $2, $3)`, [
          instanceId,
          c,
          r,
        ]),
      ),
    ).toBe('23505');
  });

  it('revoking a resource from a client drops its permissions on that resource only; deleting a scope drops its grants', async () => {
    const c = await client(instanceId, uniq('c'));
    const r1 = await resource(instanceId, `urn:${uniq('r')}`);
    const r2 = await resource(instanceId, `urn:${uniq('r')}`);
    const s1a = await scope(instanceId, r1, 'a');
    const s1b = await scope(instanceId, r1, 'b');
    const s2 = await scope(instanceId, r2, 'a');
    await ds.rows(
      `INSERT INTO client_resources (instance_id, client_id, resource_id) SELECT $1, $2, unnest($3::uuid[])`,
      [instanceId, c, [r1, r2]],
    );
    await ds.rows(
      `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id)
       SELECT $1, $2, s.resource_id, s.id FROM scopes s WHERE s.id = ANY($3::uuid[])`,
      [instanceId, c, [s1a, s1b, s2]],
    );
    const perms = async () =>
      (
        await ds.rows<{ scope_id: string }>(
          `SELECT scope_id FROM client_permissions WHERE client_id = $1 ORDER BY scope_id`,
          [c],
        )
      ).map((p) => p.scope_id);
    expect(await perms()).toEqual([s1a, s1b, s2].sort());

    await ds.rows(`DELETE FROM client_resources WHERE client_id = $1 AND resource_id = $2`, [c, r1]);
    expect(await perms()).toEqual([s2]);

    await ds.rows(`DELETE FROM scopes WHERE id = $1`, [s2]);
    expect(await perms()).toEqual([]);
  });

  it('deleting a client or a resource cascades to authorizations, scopes and permissions; a tenant in use is kept', async () => {
    const t = await tenant(instanceId);
    const c = await client(instanceId, uniq('c'), t);
    const r = await resource(instanceId, `urn:${uniq('r')}`);
    const s = await scope(instanceId, r, 'x');
    await ds.rows(`INSERT INTO client_resources (instance_id, client_id, resource_id) VALUES ($1, $2, $3)`, [
      instanceId,
      c,
      r,
    ]);
    await ds.rows(
      `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id) VALUES ($1, $2, $3, $4)`,
      [instanceId, c, r, s],
    );
    expect(await pgCode(ds.rows(`DELETE FROM tenants WHERE id = $1`, [t]))).toBe('23503');
    await ds.rows(`DELETE FROM resources WHERE id = $1`, [r]);
    expect(await ds.rows(`SELECT 1 FROM scopes WHERE id = $1`, [s])).toHaveLength(0);
    expect(await ds.rows(`SELECT 1 FROM client_resources WHERE client_id = $1`, [c])).toHaveLength(0);
    expect(await ds.rows(`SELECT 1 FROM client_permissions WHERE client_id = $1`, [c])).toHaveLength(0);
    await ds.rows(`DELETE FROM clients WHERE id = $1`, [c]);
    await ds.rows(`DELETE FROM tenants WHERE id = $1`, [t]);
  });

  it('every record needs an existing instance', async () => {
    expect(
      await pgCode(
        ds.rows(`INSERT INTO tenants (instance_id, name) VALUES ($1, 'x')`, [
          '00000000-0000-4000-8000-000000000000',
        ]),
      ),
    ).toBe('23503');
    expect(await pgCode(ds.rows(`INSERT INTO clients (client_name) VALUES ('x')`))).toBe('23502');
  });
});
