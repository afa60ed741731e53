import type { Db } from '@gatehouse/db';
import { randomBytes, randomUUID } from 'node:crypto';
import type { TestDatabase } from '@gatehouse/testing';
import {
  bootstrapIdentity,
  clientResourceAccess,
  findClientForOidc,
  findResourceByIdentifier,
  findUserByLogin,
  grantedScopes,
  hashPassword,
  isAuthorized,
  isLockedFrom,
  isLockedOut,
  MANAGEMENT_AUDIENCE,
  recordSuccessfulLogin,
  registerFailedLogin,
  resetFailedLogins,
  SecretBox,
  sealedIn,
  TREE_AUDIENCE,
  type BootstrapResult,
} from '../src/index.js';
import { identityTestDatabase, openDb, uniq } from './support.js';

describe('token-server reads', () => {
  let db: TestDatabase;
  let ds: Db;
  let boot: BootstrapResult;
  const box = new SecretBox(randomBytes(32));

  const one = async (sql: string, params: unknown[]) => (await ds.rows<{ id: string }>(sql, params))[0].id;

  beforeAll(async () => {
    db = await identityTestDatabase();
    ds = await openDb(db.url);
    boot = await bootstrapIdentity(
      ds,
      { DATA_DIR: '/unused' },
      { info: () => undefined, warn: () => undefined },
      { box, print: () => undefined },
    );
  });
  afterAll(async () => {
    await ds?.close();
    await db?.drop();
  });

  it('findClientForOidc: decrypted secret and grant types; null for unknown or malformed ids', async () => {
    const newId = randomUUID();
    const id = await one(
      `INSERT INTO clients (id, instance_id, client_name, client_secret_enc, client_metadata, is_public)
       VALUES ($5, $1, $2, $3, $4::jsonb, false) RETURNING id`,
      [
        boot.instanceId,
        uniq('web'),
        box.encrypt('s3cret-value', sealedIn.clientSecret(newId)),
        JSON.stringify({ grant_types: ['password', 'refresh_token', 7] }),
        newId,
      ],
    );
    const c = await findClientForOidc(ds, id, box);
    expect(c).toMatchObject({ id, clientSecret: 's3cret-value', grantTypes: ['password', 'refresh_token'] });
    const pub = await one(
      `INSERT INTO clients (instance_id, client_name, is_public) VALUES ($1, $2, true) RETURNING id`,
      [boot.instanceId, uniq('spa')],
    );
    expect(await findClientForOidc(ds, pub, box)).toMatchObject({
      clientSecret: null,
      grantTypes: [],
      isPublic: true,
    });
    expect(await findClientForOidc(ds, '00000000-0000-4000-8000-000000000000', box)).toBeNull();
    expect(await findClientForOidc(ds, "x' OR 1=1 --", box)).toBeNull();
    expect(await findClientForOidc(ds, '', box)).toBeNull();
  });

  it('resources, authorization and granted scopes', async () => {
    const mgmt = await findResourceByIdentifier(ds, boot.instanceId, MANAGEMENT_AUDIENCE);
    expect(mgmt).toMatchObject({
      identifierUrl: MANAGEMENT_AUDIENCE,
      isSystem: true,
      signingAlgorithm: 'RS256',
    });
    expect(await findResourceByIdentifier(ds, boot.instanceId, 'urn:nope')).toBeNull();
    expect(await findResourceByIdentifier(ds, 'not-a-uuid', MANAGEMENT_AUDIENCE)).toBeNull();

    expect(await isAuthorized(ds, boot.clientId, mgmt!.id)).toBe(true);
    const scopes = await grantedScopes(ds, boot.clientId, mgmt!.id);
    expect(scopes).toContain('clients:read');
    expect(scopes).toEqual([...scopes].sort());

    // An HS256 resource with a sealed signing secret, authorized to a client with one scope granted.
    const url = `https://${uniq('api')}.example`;
    const newRid = randomUUID();
    const rid = await one(
      `INSERT INTO resources (id, instance_id, resource_type, resource_name, identifier_url, signing_algorithm,
                              signing_secret_enc, token_lifetime)
       VALUES ($4, $1, 'api', 'hs', $2, 'HS256', $3, 600) RETURNING id`,
      [boot.instanceId, url, box.encrypt('hs-secret', sealedIn.resourceSigningSecret(newRid)), newRid],
    );
    const sRead = await one(
      `INSERT INTO scopes (instance_id, resource_id, scope_name) VALUES ($1, $2, 'read') RETURNING id`,
      [boot.instanceId, rid],
    );
    await one(
      `INSERT INTO scopes (instance_id, resource_id, scope_name) VALUES ($1, $2, 'write') RETURNING id`,
      [boot.instanceId, rid],
    );
    const cid = await one(`INSERT INTO clients (instance_id, client_name) VALUES ($1, $2) RETURNING id`, [
      boot.instanceId,
      uniq('m2m'),
    ]);
    expect(await clientResourceAccess(ds, cid, url, box)).toMatchObject({ authorized: false, scopes: [] });
    expect(await isAuthorized(ds, cid, rid)).toBe(false);

    await ds.rows(`INSERT INTO client_resources (instance_id, client_id, resource_id) VALUES ($1, $2, $3)`, [
      boot.instanceId,
      cid,
      rid,
    ]);
    expect(await clientResourceAccess(ds, cid, url, box)).toMatchObject({ authorized: true, scopes: [] });
    await ds.rows(
      `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id) VALUES ($1, $2, $3, $4)`,
      [boot.instanceId, cid, rid, sRead],
    );
    const access = await clientResourceAccess(ds, cid, url, box);
    expect(access).toMatchObject({
      authorized: true,
      scopes: ['read'],
      resource: { id: rid, signingAlgorithm: 'HS256', signingSecret: 'hs-secret', tokenLifetime: 600 },
    });
    expect((await clientResourceAccess(ds, cid, url))!.resource.signingSecret).toBeNull(); // no box, no secret
    expect(await grantedScopes(ds, cid, rid)).toEqual(['read']);
    expect(await clientResourceAccess(ds, cid, 'urn:unknown', box)).toBeNull();
    expect(await clientResourceAccess(ds, 'bogus', url, box)).toBeNull();

    // The default client sees both system resources with every scope.
    const tree = await clientResourceAccess(ds, boot.clientId, TREE_AUDIENCE);
    expect(tree).toMatchObject({ authorized: true, scopes: ['settings:write', 'trees:read', 'trees:write'] });
  });

  it('findUserByLogin: e-mail and user name case-insensitively, phone with or without separators', async () => {
    const email = `${uniq('Jane')}@Example.com`;
    const name = uniq('jane.doe');
    const id = await one(
      `INSERT INTO users (instance_id, user_email, user_name, phone_number) VALUES ($1, $2, $3, '+97699112233') RETURNING id`,
      [boot.instanceId, email, name],
    );
    expect((await findUserByLogin(ds, boot.instanceId, email.toUpperCase()))?.id).toBe(id);
    expect((await findUserByLogin(ds, boot.instanceId, ` ${name.toUpperCase()} `))?.id).toBe(id);
    expect((await findUserByLogin(ds, boot.instanceId, '+976 9911-2233'))?.id).toBe(id);
    expect(await findUserByLogin(ds, boot.instanceId, 'nobody@example.com')).toBeNull();
    expect(await findUserByLogin(ds, boot.instanceId, '')).toBeNull();
    expect(await findUserByLogin(ds, boot.instanceId, "' OR ''='")).toBeNull();
    expect(await findUserByLogin(ds, '00000000-0000-4000-8000-000000000000', email)).toBeNull();

    // Another user whose user name is the first one's e-mail: the e-mail match wins.
    const other = await one(`INSERT INTO users (instance_id, user_name) VALUES ($1, $2) RETURNING id`, [
      boot.instanceId,
      email.toLowerCase(),
    ]);
    expect((await findUserByLogin(ds, boot.instanceId, email))?.id).toBe(id);
    expect(other).not.toBe(id);
  });

  it('lockout: N failures from one address lock that address for M seconds, not another; success resets', async () => {
    const id = await one(
      `INSERT INTO users (instance_id, user_email, password_hash) VALUES ($1, $2, $3) RETURNING id`,
      [boot.instanceId, `${uniq('lock')}@example.com`, await hashPassword('pw-123456')],
    );
    const policy = { threshold: 3, lockSeconds: 60 };
    const ip = '203.0.113.5';
    expect(await registerFailedLogin(ds, id, ip, policy)).toMatchObject({
      failedLoginCount: 1,
      locked: false,
    });
    expect(await registerFailedLogin(ds, id, ip, policy)).toMatchObject({
      failedLoginCount: 2,
      locked: false,
    });
    const third = await registerFailedLogin(ds, id, ip, policy);
    expect(third).toMatchObject({ failedLoginCount: 0, locked: true });
    const until = third!.lockedUntil!.getTime();
    expect(until - Date.now()).toBeGreaterThan(55_000);
    expect(until - Date.now()).toBeLessThanOrEqual(61_000);
    expect(isLockedOut(third!)).toBe(true);
    expect(isLockedOut(third!, new Date(until + 1))).toBe(false);
    expect(await isLockedFrom(ds, id, ip)).toBe(true);
    expect(await isLockedFrom(ds, id, '198.51.100.1')).toBe(false);

    const during = await registerFailedLogin(ds, id, ip, policy);
    expect(during).toMatchObject({ locked: true });
    expect(during!.lockedUntil!.getTime()).toBe(until);

    await resetFailedLogins(ds, id);
    expect(await isLockedFrom(ds, id, ip)).toBe(false);
    const [after] = await ds.rows<{ failed_login_count: number; locked_until: Date | null }>(
      `SELECT failed_login_count, locked_until FROM users WHERE id = $1`,
      [id],
    );
    expect(after).toEqual({ failed_login_count: 0, locked_until: null });

    await registerFailedLogin(ds, id, ip, policy);
    await recordSuccessfulLogin(ds, id, ip);
    expect(await ds.rows(`SELECT 1 FROM login_failures WHERE user_id = $1`, [id])).toHaveLength(0);
    const [ok] = await ds.rows<{ login_count: number; last_login_at: Date | null }>(
      `SELECT login_count, last_login_at FROM users WHERE id = $1`,
      [id],
    );
    expect(ok.login_count).toBe(1);
    expect(ok.last_login_at).toBeInstanceOf(Date);

    expect(await registerFailedLogin(ds, '00000000-0000-4000-8000-000000000000', ip, policy)).toBeNull();
    expect(await registerFailedLogin(ds, 'nope', ip, policy)).toBeNull();
  });

  it('lockout counts concurrent failures exactly', async () => {
    const id = await one(`INSERT INTO users (instance_id, user_email) VALUES ($1, $2) RETURNING id`, [
      boot.instanceId,
      `${uniq('race')}@example.com`,
    ]);
    const policy = { threshold: 5, lockSeconds: 30 };
    const results = await Promise.all(
      Array.from({ length: 5 }, () => registerFailedLogin(ds, id, '192.0.2.1', policy)),
    );
    expect(results.filter((r) => r!.locked)).toHaveLength(1);
    expect(results.map((r) => r!.failedLoginCount).sort()).toEqual([0, 1, 2, 3, 4]);
  });
});
