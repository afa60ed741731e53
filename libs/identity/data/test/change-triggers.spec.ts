import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Db } from '@gatehouse/db';
import type { TestDatabase } from '@gatehouse/testing';
import { identityTestDatabase, openDb, uniq } from './support.js';

/**
 * Every write to a table the token server caches announces itself on the change feed, whoever makes it
 * (here: plain SQL, as an operator would), through the triggers of migrations 1790000700000 and 1795900300000.
 */
let db: TestDatabase;
let sql: Db;
let listener: pg.Client;
let seen: string[] = [];
let instanceId: string;

beforeAll(async () => {
  db = await identityTestDatabase();
  sql = await openDb(db.url);
  listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  listener.on('notification', (n) => {
    if (n.channel === 'gatehouse_identity_changes') seen.push(n.payload ?? '');
  });
  await listener.query('LISTEN gatehouse_identity_changes');
  [{ id: instanceId }] = await sql.rows<{ id: string }>(
    `INSERT INTO instances (name) VALUES ($1) RETURNING id`,
    [uniq('instance')],
  );
});
afterAll(async () => {
  await listener?.end();
  await sql?.close();
  await db?.drop();
});

/** The notifications `fn` causes (a round trip on the listening connection delivers every earlier one). */
async function announced(fn: () => Promise<unknown>): Promise<string[]> {
  await listener.query('SELECT 1');
  seen = [];
  await fn();
  await listener.query('SELECT 1');
  return [...seen].sort();
}

async function client(): Promise<string> {
  const [c] = await sql.rows<{ id: string }>(
    `INSERT INTO clients (instance_id, client_name) VALUES ($1, $2) RETURNING id`,
    [instanceId, uniq('client')],
  );
  return c.id;
}

async function user(): Promise<string> {
  const [u] = await sql.rows<{ id: string }>(
    `INSERT INTO users (instance_id, user_email) VALUES ($1, $2) RETURNING id`,
    [instanceId, `${uniq('u')}@example.test`],
  );
  return u.id;
}

describe('change triggers', () => {
  it('clients and their access announce client:<id> on insert, update and delete', async () => {
    let id = '';
    expect(await announced(async () => (id = await client()))).toEqual([`client:${id}`]);
    expect(
      await announced(() => sql.exec(`UPDATE clients SET client_secret_enc = 'x' WHERE id = $1`, [id])),
    ).toEqual([`client:${id}`]);
    const [r] = await sql.rows<{ id: string }>(
      `INSERT INTO resources (instance_id, resource_type, resource_name, identifier_url) VALUES ($1, 'api', $2, $3) RETURNING id`,
      [instanceId, uniq('res'), `https://${uniq('r')}.test`],
    );
    expect(
      await announced(() =>
        sql.exec(`INSERT INTO client_resources (instance_id, client_id, resource_id) VALUES ($1, $2, $3)`, [
          instanceId,
          id,
          r.id,
        ]),
      ),
    ).toEqual([`client:${id}`]);
    // the cascade to client_resources announces the same client: PostgreSQL folds identical notifications
    expect(await announced(() => sql.exec(`DELETE FROM clients WHERE id = $1`, [id]))).toEqual([
      `client:${id}`,
    ]);
    // a statement that changes no row announces nothing
    expect(await announced(() => sql.exec(`DELETE FROM clients WHERE id = $1`, [randomUUID()]))).toEqual([]);
  });

  it('resources, scopes and roles announce all; a rolled-back write announces nothing', async () => {
    expect(
      await announced(() =>
        sql.exec(
          `INSERT INTO resources (instance_id, resource_type, resource_name, identifier_url) VALUES ($1, 'api', $2, $3)`,
          [instanceId, uniq('res'), `https://${uniq('r')}.test`],
        ),
      ),
    ).toEqual(['all']);
    expect(
      await announced(() =>
        sql
          .transaction(async (tx) => {
            await tx.exec(`INSERT INTO roles (instance_id, role_name) VALUES ($1, $2)`, [
              instanceId,
              uniq('r'),
            ]);
            throw new Error('roll back');
          })
          .catch(() => undefined),
      ),
    ).toEqual([]);
  });

  it('users announce user:<id>, except a login that only counts itself', async () => {
    const id = await user();
    expect(await announced(() => sql.exec(`UPDATE users SET is_blocked = true WHERE id = $1`, [id]))).toEqual(
      [`user:${id}`],
    );
    expect(
      await announced(() =>
        sql.exec(
          `UPDATE users SET last_login_at = now(), login_count = login_count + 1, failed_login_count = 0
            WHERE id = $1`,
          [id],
        ),
      ),
    ).toEqual([]);
  });

  it("a user's authenticators announce user:<id> when enrolled, confirmed, renamed or removed, not when used", async () => {
    const id = await user();
    const u = `user:${id}`;
    let factor = '';
    expect(
      await announced(async () => {
        [{ id: factor }] = await sql.rows<{ id: string }>(
          `INSERT INTO user_authenticators (instance_id, user_id, type, name) VALUES ($1, $2, 'totp', 'app')
           RETURNING id`,
          [instanceId, id],
        );
      }),
    ).toEqual([u]);
    const write = (set: string) => () =>
      sql.exec(`UPDATE user_authenticators SET ${set} WHERE id = $1`, [factor]);
    expect(await announced(write('confirmed_at = now()'))).toEqual([u]);
    // a sign-in with the factor: the step it used and when, nothing that changes what is enrolled
    expect(await announced(write('last_step = 1, last_used_at = now(), updated_at = now()'))).toEqual([]);
    expect(await announced(write(`name = 'phone'`))).toEqual([u]);
    expect(
      await announced(() => sql.exec(`DELETE FROM user_authenticators WHERE id = $1`, [factor])),
    ).toEqual([u]);
  });

  it('one notification per distinct id, all past 100 ids', async () => {
    const ids = [await user(), await user()];
    expect(
      await announced(() => sql.exec(`UPDATE users SET nickname = 'n' WHERE id = ANY($1::uuid[])`, [ids])),
    ).toEqual(ids.map((i) => `user:${i}`).sort());
    expect(
      await announced(() =>
        sql.exec(
          `INSERT INTO users (instance_id, user_email)
           SELECT $1, 'bulk-' || g || '-' || $2 || '@example.test' FROM generate_series(1, 150) g`,
          [instanceId, uniq('b')],
        ),
      ),
    ).toEqual(['all']);
  });

  it('oidc_payloads: a live grant updated or deleted announces its user; tokens and expired grants nothing', async () => {
    const account = await user();
    const insert = (model: string, id: string, expires = "now() + interval '1 hour'") =>
      sql.exec(`INSERT INTO oidc_payloads (model, id, payload, expires_at) VALUES ($1, $2, $3, ${expires})`, [
        model,
        id,
        { accountId: account },
      ]);
    expect(await announced(() => insert('Grant', 'g1'))).toEqual([]);
    expect(await announced(() => insert('AccessToken', 't1'))).toEqual([]);
    expect(
      await announced(() => sql.exec(`DELETE FROM oidc_payloads WHERE model = 'AccessToken' AND id = 't1'`)),
    ).toEqual([]);
    expect(
      await announced(() =>
        sql.exec(`UPDATE oidc_payloads SET payload = payload WHERE model = 'Grant' AND id = 'g1'`),
      ),
    ).toEqual([`user:${account}`]);
    expect(
      await announced(() => sql.exec(`DELETE FROM oidc_payloads WHERE model = 'Grant' AND id = 'g1'`)),
    ).toEqual([`user:${account}`]);
    await insert('Grant', 'g2', "now() - interval '1 second'");
    expect(await announced(() => sql.exec(`DELETE FROM oidc_payloads WHERE expires_at < now()`))).toEqual([]);
  });
});
