import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { schemaDrift } from '@gatehouse/db';
import { buildService, type BuiltService } from '@gatehouse/service';
import { createEmptyTestDatabase } from '@gatehouse/testing';
import { findClientForOidc, loadSecretBox, SECRET_BOX, type SecretBox } from '@gatehouse/identity-data';
import { identityService } from '../src/identity.service-definition.js';
import { loadIdentityEnv, startIdentity, type IdentityEnv, type IdentityHarness } from './support.js';

describe('apps/identity start-up', () => {
  let h: IdentityHarness;
  const clientId = randomUUID();
  const vars = {
    BOOTSTRAP_CLIENT_ID: clientId,
    BOOTSTRAP_CLIENT_SECRET: 'identity-test-secret-0123456789',
    BOOTSTRAP_ADMIN_EMAIL: 'admin@identity.test',
    BOOTSTRAP_ADMIN_PASSWORD: 'identity-admin-pw',
  };

  beforeAll(async () => {
    h = await startIdentity(vars);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('serves health, readiness and its OpenAPI document', async () => {
    const server = h.built.app.getHttpServer();
    await request(server).get('/livez').expect(200);
    await request(server).get('/readyz').expect(200, { status: 'ok' });
    const doc = await request(server).get('/docs/openapi.json').expect(200);
    expect(doc.body.info.title).toBe('Gatehouse identity management API');
  });

  it('runs the identity migrations with no drift and seeds the bootstrap client from BOOTSTRAP_*', async () => {
    expect(
      await schemaDrift({
        url: h.built.db.url,
        entities: identityService.entities,
        migrations: identityService.migrations,
      }),
    ).toEqual([]);
    const box = h.built.app.get<SecretBox>(SECRET_BOX);
    const client = await findClientForOidc(h.built.db, clientId, box);
    expect(client).toMatchObject({ isDefault: true, clientSecret: vars.BOOTSTRAP_CLIENT_SECRET });
    // The key was generated into DATA_DIR on first start and the app's box is that key.
    expect(loadSecretBox({ DATA_DIR: h.dataDir }).box.keyId).toBe(box.keyId);
  });

  it('a restart on the same database and DATA_DIR keeps the seed as it was', async () => {
    const before = await h.built.db.rows(`SELECT id, client_secret_enc, updated_at FROM clients ORDER BY id`);
    const env = loadIdentityEnv({
      DATABASE_URL: h.db.url,
      DATA_DIR: h.dataDir,
      BOOTSTRAP_CLIENT_ID: randomUUID(),
      BOOTSTRAP_CLIENT_SECRET: 'a-different-secret-0123456789',
    });
    const again = (await buildService(identityService, env)) as BuiltService<IdentityEnv>;
    try {
      expect(
        await again.db.rows(`SELECT id, client_secret_enc, updated_at FROM clients ORDER BY id`),
      ).toEqual(before);
      const box = again.app.get<SecretBox>(SECRET_BOX);
      expect((await findClientForOidc(again.db, clientId, box))?.clientSecret).toBe(
        vars.BOOTSTRAP_CLIENT_SECRET,
      );
    } finally {
      await again.close();
    }
  });
});

describe('apps/identity: two replicas starting at once on an empty database', () => {
  it('migrate and seed exactly once', async () => {
    const db = await createEmptyTestDatabase();
    const key = randomBytes(32).toString('base64');
    const env = loadIdentityEnv({
      DATABASE_URL: db.url,
      DATA_DIR: '/nonexistent',
      SECRET_ENCRYPTION_KEY: key,
      BOOTSTRAP_CLIENT_SECRET: 'replica-secret-0123456789',
      BOOTSTRAP_ADMIN_PASSWORD: 'replica-admin-pw',
    });
    const built = await Promise.all([buildService(identityService, env), buildService(identityService, env)]);
    try {
      const [counts] = await built[0].db.rows<{ instances: string; clients: string; users: string }>(
        `SELECT (SELECT count(*) FROM instances) AS instances, (SELECT count(*) FROM clients) AS clients,
                (SELECT count(*) FROM users) AS users`,
      );
      expect(counts).toEqual({ instances: '1', clients: '1', users: '1' });
    } finally {
      await Promise.all(built.map((b) => b.close()));
      await db.drop();
    }
  });
});
