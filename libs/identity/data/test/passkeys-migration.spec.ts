import { randomUUID } from 'node:crypto';
import type { Db } from '@gatehouse/db';
import type { TestDatabase } from '@gatehouse/testing';
import type { QueryRunner } from 'typeorm';
import { Passkeys1796000000000 } from '../src/migrations/1796000000000-passkeys.js';
import { identityTestDatabase, openDb, pgCode } from './support.js';

// Passkeys on a database that already has second factors: the TOTP rows stay as they were, a credential id is
// unique across the server, challenges go with their user, and down takes only what up added.
describe('migration Passkeys1796000000000', () => {
  let db: TestDatabase;
  let ds: Db;
  let instanceId = '';
  const runner = () => ({ query: (text: string) => ds.rows(text) }) as unknown as QueryRunner;
  const columns = async () =>
    (
      await ds.rows<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'user_authenticators'
          AND column_name IN ('credential_id', 'public_key', 'sign_count', 'transports', 'backup_eligible')
          ORDER BY 1`,
      )
    ).map((r) => r.column_name);
  const user = async () => {
    const id = randomUUID();
    await ds.exec(`INSERT INTO users (id, instance_id, user_email) VALUES ($1, $2, $3)`, [
      id,
      instanceId,
      `${id}@mig.test`,
    ]);
    return id;
  };

  beforeAll(async () => {
    db = await identityTestDatabase();
    ds = await openDb(db.url);
    [{ id: instanceId }] = await ds.rows<{ id: string }>(
      `INSERT INTO instances (name) VALUES ('mig') RETURNING id`,
    );
  });
  afterAll(async () => {
    await ds.close();
    await db.drop();
  });

  it('adds the passkey columns and the challenges, keeps TOTP rows, and reverts', async () => {
    expect(await columns()).toEqual([
      'backup_eligible',
      'credential_id',
      'public_key',
      'sign_count',
      'transports',
    ]);
    const a = await user();
    const b = await user();
    const totp = randomUUID();
    await ds.exec(
      `INSERT INTO user_authenticators (id, instance_id, user_id, type, name, secret_enc, confirmed_at)
       VALUES ($1, $2, $3, 'totp', 'Authenticator app', 'sealed', now())`,
      [totp, instanceId, a],
    );
    const key = (userId: string, credential: string) =>
      ds.exec(
        `INSERT INTO user_authenticators (instance_id, user_id, type, name, credential_id, public_key, sign_count,
                                          transports, confirmed_at)
         VALUES ($1, $2, 'webauthn', 'Laptop', $3, 'pk', 0, ARRAY['internal'], now())`,
        [instanceId, userId, credential],
      );
    await key(a, 'cred-1');
    // a credential is one row, whoever registers it again
    expect(await pgCode(key(b, 'cred-1'))).toBe('23505');
    await ds.exec(
      `INSERT INTO webauthn_challenges (challenge, instance_id, purpose, binding, user_id, expires_at)
       VALUES ('c1', $1, 'register', 'account:x', $2, now() + interval '5 minutes')`,
      [instanceId, b],
    );
    expect(
      await pgCode(
        ds.exec(
          `INSERT INTO webauthn_challenges (challenge, instance_id, purpose, binding, expires_at)
           VALUES ('c2', $1, 'other', 'x', now())`,
          [instanceId],
        ),
      ),
    ).toBe('23514');
    await ds.exec(`DELETE FROM users WHERE id = $1`, [b]);
    expect(await ds.rows(`SELECT 1 FROM webauthn_challenges WHERE challenge = 'c1'`)).toEqual([]);

    await new Passkeys1796000000000().down(runner());
    expect(await columns()).toEqual([]);
    expect(
      await ds.rows(`SELECT 1 FROM information_schema.tables WHERE table_name = 'webauthn_challenges'`),
    ).toEqual([]);
    const left = await ds.rows<{ id: string; type: string }>(
      `SELECT id, type FROM user_authenticators WHERE user_id = $1`,
      [a],
    );
    expect(left).toEqual([{ id: totp, type: 'totp' }]);
    await new Passkeys1796000000000().up(runner());
    expect(await columns()).toHaveLength(5);
  });
});
