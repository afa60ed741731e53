import type { Db } from '@gatehouse/db';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestDatabase } from '@gatehouse/testing';
import {
  accountClientId,
  ACCOUNT_CLIENT_NAME,
  bootstrapIdentity,
  ensureAccountClients,
  DEFAULT_ADMIN_EMAIL,
  findClientForOidc,
  loadSecretBox,
  MANAGEMENT_AUDIENCE,
  SecretBox,
  ensureAdminRole,
  seedInstance,
  SYSTEM_RESOURCES,
  TREE_AUDIENCE,
  verifyPassword,
  type BootstrapLogger,
} from '../src/index.js';
import { identityTestDatabase, openDb } from './support.js';

const silent = (): BootstrapLogger & { lines: string[] } => {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`) };
};

/** Row counts of every seeded table: a second bootstrap must not change any. */
async function counts(ds: Db): Promise<Record<string, number>> {
  const [r] = await ds.rows<
    Record<string, string>
  >(`SELECT (SELECT count(*) FROM instances) AS instances, (SELECT count(*) FROM resources) AS resources,
            (SELECT count(*) FROM scopes) AS scopes, (SELECT count(*) FROM clients) AS clients,
            (SELECT count(*) FROM client_resources) AS client_resources,
            (SELECT count(*) FROM client_permissions) AS client_permissions, (SELECT count(*) FROM users) AS users,
            (SELECT count(*) FROM bootstrap_markers) AS markers`);
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)]));
}

describe('bootstrapIdentity with generated credentials', () => {
  let db: TestDatabase;
  let ds: Db;
  let dataDir: string;

  beforeAll(async () => {
    db = await identityTestDatabase();
    ds = await openDb(db.url);
    dataDir = mkdtempSync(path.join(tmpdir(), 'gh-bootstrap-'));
  });
  afterAll(async () => {
    await ds?.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('seeds instance, system resources, default client and admin once, prints generated secrets once', async () => {
    const printed: string[] = [];
    const log = silent();
    const env = { DATA_DIR: dataDir };
    const first = await bootstrapIdentity(ds, env, log, { print: (t) => printed.push(t) });
    expect(first.seeded).toBe(true);
    expect(first.generated).toEqual([
      'BOOTSTRAP_CLIENT_ID',
      'BOOTSTRAP_CLIENT_SECRET',
      'BOOTSTRAP_ADMIN_PASSWORD',
    ]);
    // The encryption key was generated into DATA_DIR with a warning.
    expect(statSync(path.join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(log.lines.some((l) => l.startsWith('warn generated the secret encryption key'))).toBe(true);

    const box = loadSecretBox(env).box;
    const client = await findClientForOidc(ds, first.clientId, box);
    expect(client).toMatchObject({
      id: first.clientId,
      instanceId: first.instanceId,
      isDefault: true,
      isPublic: false,
      grantTypes: ['client_credentials'],
    });
    const secret = client!.clientSecret!;
    expect(secret.length).toBeGreaterThanOrEqual(32);

    // Printed exactly once, framed, with the generated values; never through the logger.
    expect(printed).toHaveLength(1);
    expect(printed[0]).toContain('shown ONCE');
    expect(printed[0]).toContain(first.clientId);
    expect(printed[0]).toContain(secret);
    expect(printed[0]).toContain(DEFAULT_ADMIN_EMAIL);
    const password = /admin password:\s+(\S+)/.exec(printed[0])![1];
    expect(log.lines.join('\n')).not.toContain(secret);
    expect(log.lines.join('\n')).not.toContain(password);

    const [admin] = await ds.rows<{ id: string; password_hash: string; user_email: string }>(
      `SELECT id, password_hash, user_email FROM users WHERE id = $1`,
      [first.adminUserId],
    );
    expect(admin.user_email).toBe(DEFAULT_ADMIN_EMAIL);
    expect(await verifyPassword(admin.password_hash, password)).toBe(true);

    // System resources with every scope, all granted to the default client.
    const resources = await ds.rows<{
      identifier_url: string;
      is_system: boolean;
      scopes: string[];
      granted: string[];
    }>(
      `SELECT r.identifier_url, r.is_system,
              array(SELECT scope_name FROM scopes s WHERE s.resource_id = r.id ORDER BY 1) AS scopes,
              array(SELECT s.scope_name FROM client_permissions p JOIN scopes s ON s.id = p.scope_id
                     WHERE p.client_id = $1 AND p.resource_id = r.id ORDER BY 1) AS granted
         FROM resources r ORDER BY r.identifier_url`,
      [first.clientId],
    );
    expect(resources.map((r) => r.identifier_url)).toEqual([MANAGEMENT_AUDIENCE, TREE_AUDIENCE]);
    for (const r of resources) {
      const spec = SYSTEM_RESOURCES.find((s) => s.identifierUrl === r.identifier_url)!;
      expect(r.is_system).toBe(true);
      expect(r.scopes).toEqual(spec.scopes.map((s) => s.name).sort());
      expect(r.granted).toEqual(r.scopes);
    }
    expect(resources[0].scopes).toEqual(
      expect.arrayContaining(['clients:read', 'clients:write', 'instances:write']),
    );
    expect(resources[1].scopes).toEqual(['settings:write', 'trees:read', 'trees:write']);
  });

  it('a restart changes nothing and prints nothing, even with other BOOTSTRAP_* values', async () => {
    const before = await counts(ds);
    const [clientBefore] = await ds.rows(`SELECT * FROM clients WHERE is_default`);
    const printed: string[] = [];
    const log = silent();
    const again = await bootstrapIdentity(
      ds,
      {
        DATA_DIR: dataDir,
        BOOTSTRAP_CLIENT_ID: randomUUID(),
        BOOTSTRAP_CLIENT_SECRET: 'another-secret-value',
        BOOTSTRAP_ADMIN_PASSWORD: 'another-password',
      },
      log,
      { print: (t) => printed.push(t) },
    );
    expect(again.seeded).toBe(false);
    expect(again.generated).toEqual([]);
    expect(printed).toEqual([]);
    expect(await counts(ds)).toEqual(before);
    expect((await ds.rows(`SELECT * FROM clients WHERE is_default`))[0]).toEqual(clientBefore);
    expect(again.clientId).toBe((clientBefore as { id: string }).id);
    expect(log.lines.some((l) => l.includes('BOOTSTRAP_CLIENT_ID differs'))).toBe(true);
  });

  it('adds system scopes a newer release introduces, granting only those to the default client', async () => {
    const [{ id: scopeId }] = await ds.rows<{ id: string }>(
      `SELECT s.id FROM scopes s JOIN resources r ON r.id = s.resource_id
        WHERE r.identifier_url = $1 AND s.scope_name = 'trees:read'`,
      [TREE_AUDIENCE],
    );
    // Simulate an older release (scope missing), and an administrator having revoked another one.
    await ds.rows(`DELETE FROM scopes WHERE id = $1`, [scopeId]);
    await ds.rows(
      `DELETE FROM client_permissions p USING scopes s WHERE s.id = p.scope_id AND s.scope_name = 'settings:write'`,
    );
    await bootstrapIdentity(ds, { DATA_DIR: dataDir }, silent(), { print: () => undefined });
    const granted = await ds.rows<{ scope_name: string }>(
      `SELECT s.scope_name FROM client_permissions p JOIN scopes s ON s.id = p.scope_id
        JOIN resources r ON r.id = p.resource_id WHERE r.identifier_url = $1 ORDER BY 1`,
      [TREE_AUDIENCE],
    );
    expect(granted.map((g) => g.scope_name)).toEqual(['trees:read', 'trees:write']);
  });

  it('gives a scope a newer release adds to every instance: default clients, instance and tenant admin roles', async () => {
    const box = loadSecretBox({ DATA_DIR: dataDir }).box;
    const other = await ds.transaction((tx) => seedInstance(tx, { name: `other-${randomUUID()}` }, box));
    const [{ id: tenantId }] = await ds.rows<{ id: string }>(
      `INSERT INTO tenants (instance_id, name) VALUES ($1, 'upgrade-tenant') RETURNING id`,
      [other.instanceId],
    );
    const tenantRole = await ds.transaction((tx) => ensureAdminRole(tx, other.instanceId, tenantId));
    const holders = () =>
      ds.rows<{ holder: string }>(
        `SELECT 'client ' || c.instance_id AS holder FROM client_permissions p JOIN clients c ON c.id = p.client_id
           JOIN scopes s ON s.id = p.scope_id WHERE s.scope_name = 'logs:read' AND c.is_default
         UNION ALL
         SELECT coalesce(r.system_role, 'role') || ' ' || coalesce(r.tenant_id, r.instance_id) FROM role_permissions p
           JOIN roles r ON r.id = p.role_id JOIN scopes s ON s.id = p.scope_id WHERE s.scope_name = 'logs:read'
         ORDER BY 1`,
      );
    const [{ id: defaultInstance }] = await ds.rows<{ id: string }>(
      `SELECT id FROM instances WHERE is_default`,
    );
    const expected = [
      `client ${defaultInstance}`,
      `client ${other.instanceId}`,
      `instance_admin ${defaultInstance}`,
      `instance_admin ${other.instanceId}`,
      `tenant_admin ${tenantId}`,
    ].sort();
    expect((await holders()).map((h) => h.holder)).toEqual(expected);
    expect(tenantRole.created).toBe(true);
    // An older release: no logs:read anywhere.
    await ds.rows(`DELETE FROM scopes WHERE scope_name = 'logs:read'`);
    expect(await holders()).toEqual([]);
    await bootstrapIdentity(ds, { DATA_DIR: dataDir }, silent(), { print: () => undefined });
    expect((await holders()).map((h) => h.holder)).toEqual(expected);
  });
});

describe('bootstrapIdentity with BOOTSTRAP_* set', () => {
  let db: TestDatabase;
  let ds: Db;

  beforeAll(async () => {
    db = await identityTestDatabase();
    ds = await openDb(db.url);
  });
  afterAll(async () => {
    await ds?.close();
    await db?.drop();
  });

  it('uses the given id, secret, e-mail and password and prints no secret', async () => {
    const key = randomBytes(32).toString('base64');
    const env = {
      DATA_DIR: '/nonexistent-not-used',
      SECRET_ENCRYPTION_KEY: key,
      BOOTSTRAP_CLIENT_ID: randomUUID().toUpperCase(),
      BOOTSTRAP_CLIENT_SECRET: 'given-client-secret-0123456789',
      BOOTSTRAP_ADMIN_EMAIL: 'Root@Example.org',
      BOOTSTRAP_ADMIN_PASSWORD: 'given-admin-password',
    };
    const printed: string[] = [];
    const r = await bootstrapIdentity(ds, env, silent(), { print: (t) => printed.push(t) });
    expect(r.seeded).toBe(true);
    expect(r.generated).toEqual([]);
    expect(r.clientId).toBe(env.BOOTSTRAP_CLIENT_ID.toLowerCase());
    expect(printed).toEqual([]);

    const client = await findClientForOidc(ds, r.clientId, new SecretBox(Buffer.from(key, 'base64')));
    expect(client?.clientSecret).toBe(env.BOOTSTRAP_CLIENT_SECRET);
    const [stored] = await ds.rows<{ client_secret_enc: string }>(`SELECT client_secret_enc FROM clients`);
    expect(stored.client_secret_enc).not.toContain(env.BOOTSTRAP_CLIENT_SECRET);

    const [admin] = await ds.rows<{ user_email: string; password_hash: string }>(
      `SELECT user_email, password_hash FROM users WHERE id = $1`,
      [r.adminUserId],
    );
    expect(admin.user_email).toBe('Root@Example.org');
    expect(await verifyPassword(admin.password_hash, env.BOOTSTRAP_ADMIN_PASSWORD)).toBe(true);
  });
});

describe('bootstrapIdentity from two processes at once', () => {
  let db: TestDatabase;
  let a: Db;
  let b: Db;

  beforeAll(async () => {
    db = await identityTestDatabase();
    a = await openDb(db.url);
    b = await openDb(db.url);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('seeds exactly once and both see the same ids', async () => {
    const env = { DATA_DIR: '/unused', SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
    const printed: string[] = [];
    const print = (t: string) => printed.push(t);
    const results = await Promise.all([
      bootstrapIdentity(a, env, silent(), { print }),
      bootstrapIdentity(b, env, silent(), { print }),
      bootstrapIdentity(a, env, silent(), { print }),
      bootstrapIdentity(b, env, silent(), { print }),
    ]);
    expect(results.filter((r) => r.seeded)).toHaveLength(1);
    expect(new Set(results.map((r) => r.clientId)).size).toBe(1);
    expect(new Set(results.map((r) => r.instanceId)).size).toBe(1);
    expect(new Set(results.map((r) => r.adminUserId)).size).toBe(1);
    expect(printed).toHaveLength(1);
    expect(await counts(a)).toEqual({
      instances: 1,
      resources: 2,
      scopes: SYSTEM_RESOURCES.reduce((n, s) => n + s.scopes.length, 0),
      clients: 1,
      client_resources: 2,
      client_permissions: SYSTEM_RESOURCES.reduce((n, s) => n + s.scopes.length, 0),
      users: 1,
      markers: 1,
    });
  });
});

describe('hole 10: bootstrap secrets go to standard output only', () => {
  let db: TestDatabase;
  let ds: Db;
  let dataDir: string;

  beforeAll(async () => {
    db = await identityTestDatabase();
    ds = await openDb(db.url);
    dataDir = mkdtempSync(path.join(tmpdir(), 'gh-bootstrap-file-'));
  });
  afterAll(async () => {
    await ds?.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('BOOTSTRAP_SECRETS_FILE: the generated secrets go to a 0600 file in DATA_DIR, standard output names the file', async () => {
    const printed: string[] = [];
    const log = silent();
    const env = { DATA_DIR: dataDir, BOOTSTRAP_SECRETS_FILE: 'bootstrap-secrets.txt' };
    const first = await bootstrapIdentity(ds, env, log, { print: (t) => printed.push(t) });
    expect(first.seeded).toBe(true);
    const file = path.join(dataDir, 'bootstrap-secrets.txt');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');

    const secret = (await findClientForOidc(ds, first.clientId, loadSecretBox(env).box))!.clientSecret!;
    expect(text).toContain(first.clientId);
    expect(text).toContain(secret);
    const password = /admin password:\s+(\S+)/.exec(text)![1];
    const [admin] = await ds.rows<{ password_hash: string }>(
      `SELECT password_hash FROM users WHERE id = $1`,
      [first.adminUserId],
    );
    expect(await verifyPassword(admin.password_hash, password)).toBe(true);

    // standard output: the file's path, never a secret
    expect(printed).toHaveLength(1);
    expect(printed[0]).toContain(file);
    expect(printed[0]).not.toContain(secret);
    expect(printed[0]).not.toContain(password);
    expect(log.lines.join('\n')).not.toContain(secret);

    // a restart neither prints nor rewrites
    rmSync(file);
    const again = await bootstrapIdentity(ds, env, log, { print: (t) => printed.push(t) });
    expect(again.seeded).toBe(false);
    expect(printed).toHaveLength(1);
    expect(() => statSync(file)).toThrow();
  });
});

describe('ensureAccountClients: the seeded first-party account client of every instance', () => {
  let db: TestDatabase;
  let a: Db;
  let b: Db;
  const env = { DATA_DIR: '/unused', SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  const accountClients = (ds: Db) =>
    ds.rows<{ id: string; instance_id: string; callbacks: string[]; is_public: boolean; grants: number }>(
      `SELECT c.id, c.instance_id, c.client_metadata->'urls'->'callbacks' AS callbacks, c.is_public,
              (SELECT count(*)::int FROM client_resources r WHERE r.client_id = c.id)
                + (SELECT count(*)::int FROM client_permissions p WHERE p.client_id = c.id) AS grants
         FROM clients c WHERE c.client_metadata->>'gatehouse_account' = 'true' ORDER BY c.instance_id`,
    );

  beforeAll(async () => {
    db = await identityTestDatabase();
    a = await openDb(db.url);
    b = await openDb(db.url);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('creates one per instance from replicas at once, follows a changed issuer, recreates a deleted one', async () => {
    const boot = await bootstrapIdentity(a, env, silent(), { print: () => undefined });
    const { box } = loadSecretBox(env);
    const other = await a.transaction((m) => seedInstance(m, { name: `other-${randomUUID()}` }, box));
    const issuer = 'https://id.example.test/';
    const results = await Promise.all([
      ensureAccountClients(a, issuer),
      ensureAccountClients(b, issuer),
      ensureAccountClients(a, issuer),
      ensureAccountClients(b, issuer),
    ]);
    expect(results.flatMap((r) => r.created).sort()).toEqual(
      [accountClientId(boot.instanceId), accountClientId(other.instanceId)].sort(),
    );
    const rows = await accountClients(a);
    expect(rows.map((r) => r.instance_id).sort()).toEqual([boot.instanceId, other.instanceId].sort());
    for (const r of rows) {
      expect(r).toMatchObject({
        id: accountClientId(r.instance_id),
        callbacks: ['https://id.example.test/account'],
        is_public: true,
        grants: 0,
      });
    }
    const client = await findClientForOidc(a, accountClientId(boot.instanceId), box);
    expect(client).toMatchObject({
      isPublic: true,
      isFirstParty: true,
      clientSecret: null,
      grantTypes: ['authorization_code'],
    });

    // a later start: nothing new, nothing changed
    expect(await ensureAccountClients(b, issuer)).toEqual({ created: [], updated: [], nameTaken: [] });
    // ISSUER changed: each callback follows it
    const moved = await ensureAccountClients(a, 'https://login.example.test');
    expect(moved.updated.sort()).toEqual(rows.map((r) => r.id).sort());
    expect((await accountClients(a)).map((r) => r.callbacks)).toEqual([
      ['https://login.example.test/account'],
      ['https://login.example.test/account'],
    ]);
    // deleted: the next call creates it again, with the same id
    await a.exec(`DELETE FROM clients WHERE id = $1`, [accountClientId(other.instanceId)]);
    expect(await ensureAccountClients(a, 'https://login.example.test')).toEqual({
      created: [accountClientId(other.instanceId)],
      updated: [],
      nameTaken: [],
    });
    // an instance whose own client already has the name: reported, never an error, nothing overwritten
    const third = await a.transaction((m) => seedInstance(m, { name: `third-${randomUUID()}` }, box));
    await a.exec(`INSERT INTO clients (instance_id, client_name) VALUES ($1, $2)`, [
      third.instanceId,
      ACCOUNT_CLIENT_NAME,
    ]);
    expect(await ensureAccountClients(a, 'https://login.example.test', [third.instanceId])).toEqual({
      created: [],
      updated: [],
      nameTaken: [third.instanceId],
    });
  });
});
