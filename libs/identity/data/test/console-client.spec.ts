import { randomBytes } from 'node:crypto';
import type { Db } from '@gatehouse/db';
import type { TestDatabase } from '@gatehouse/testing';
import {
  bootstrapIdentity,
  CONSOLE_CLIENT_ID,
  CONSOLE_CLIENT_NAME,
  ensureConsoleClient,
  findClientForOidc,
  loadSecretBox,
  type BootstrapLogger,
} from '../src/index.js';
import { identityTestDatabase, openDb } from './support.js';

const silent: BootstrapLogger = { info: () => undefined, warn: () => undefined };

describe('ensureConsoleClient: the seeded public client of the admin console', () => {
  let db: TestDatabase;
  let a: Db;
  let b: Db;
  const env = { DATA_DIR: '/unused', SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  const urls = () =>
    a.one<{ urls: unknown }>(`SELECT client_metadata->'urls' AS urls FROM clients WHERE id = $1`, [
      CONSOLE_CLIENT_ID,
    ]);
  const scopes = () =>
    a.rows<{ identifier_url: string; scope_name: string }>(
      `SELECT r.identifier_url, s.scope_name FROM client_permissions p
         JOIN scopes s ON s.id = p.scope_id JOIN resources r ON r.id = p.resource_id
        WHERE p.client_id = $1 ORDER BY 1, 2`,
      [CONSOLE_CLIENT_ID],
    );

  beforeAll(async () => {
    db = await identityTestDatabase();
    a = await openDb(db.url);
    b = await openDb(db.url);
    await bootstrapIdentity(a, env, silent, { print: () => undefined });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('creates one from replicas at once: public, first party, code + refresh, both APIs without the secrets', async () => {
    const results = await Promise.all([
      ensureConsoleClient(a, 'http://localhost:3003'),
      ensureConsoleClient(b, 'http://localhost:3003'),
      ensureConsoleClient(a, 'http://localhost:3003/'),
    ]);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const { box } = loadSecretBox(env);
    expect(await findClientForOidc(a, CONSOLE_CLIENT_ID, box)).toMatchObject({
      clientName: CONSOLE_CLIENT_NAME,
      isPublic: true,
      isFirstParty: true,
      isGlobal: true,
      clientSecret: null,
      grantTypes: ['authorization_code', 'refresh_token'],
    });
    expect((await urls())?.urls).toEqual({
      callbacks: ['http://localhost:3003/callback'],
      logout_urls: ['http://localhost:3003/'],
    });
    const granted = await scopes();
    expect(new Set(granted.map((g) => g.identifier_url))).toEqual(
      new Set(['urn:gatehouse:management', 'urn:gatehouse:tree']),
    );
    expect(granted.map((g) => g.scope_name)).toEqual(
      expect.arrayContaining(['users:write', 'clients:write', 'tenants:read', 'trees:write']),
    );
    expect(granted.map((g) => g.scope_name)).not.toEqual(expect.arrayContaining(['clients:read_secrets']));
    expect(granted.map((g) => g.scope_name)).not.toContain('resources:read_secrets');
  });

  it('follows a changed console URL, keeps narrowed grants, and comes back when deleted', async () => {
    await a.exec(
      `DELETE FROM client_permissions p USING scopes s
        WHERE p.scope_id = s.id AND p.client_id = $1 AND s.scope_name = 'tenants:write'`,
      [CONSOLE_CLIENT_ID],
    );
    expect(await ensureConsoleClient(a, 'https://console.example.test')).toEqual({
      created: false,
      updated: true,
      nameTaken: false,
    });
    expect((await urls())?.urls).toEqual({
      callbacks: ['https://console.example.test/callback'],
      logout_urls: ['https://console.example.test/'],
    });
    expect((await scopes()).map((g) => g.scope_name)).not.toContain('tenants:write');
    expect(await ensureConsoleClient(a, 'https://console.example.test')).toEqual({
      created: false,
      updated: false,
      nameTaken: false,
    });
    await a.exec(`DELETE FROM clients WHERE id = $1`, [CONSOLE_CLIENT_ID]);
    expect((await ensureConsoleClient(a, 'https://console.example.test')).created).toBe(true);
    // another client of the default instance holding the name: reported, nothing overwritten
    await a.exec(`DELETE FROM clients WHERE id = $1`, [CONSOLE_CLIENT_ID]);
    await a.exec(
      `INSERT INTO clients (instance_id, client_name) SELECT id, $1 FROM instances WHERE is_default`,
      [CONSOLE_CLIENT_NAME],
    );
    expect(await ensureConsoleClient(a, 'https://console.example.test')).toEqual({
      created: false,
      updated: false,
      nameTaken: true,
    });
  });
});
