import type { Db } from '@gatehouse/db';
import { randomBytes, randomUUID } from 'node:crypto';
import { hashPassword, SECRET_BOX, sealedIn, type SecretBox } from '@gatehouse/identity-data';
import type { AuthHarness } from './auth-app.js';

const uniq = (p: string) => `${p}-${randomBytes(4).toString('hex')}`;

export interface TestClient {
  id: string;
  secret?: string;
}

export interface TestResource {
  id: string;
  identifier: string;
  scopes: Record<string, string>;
}

export interface TestUser {
  id: string;
  email: string;
  userName: string;
  phone: string;
  password: string;
}

/**
 * Test data written straight into the identity tables (the management API is another app), with unique names, in
 * the instance the bootstrap created.
 */
export class Fixtures {
  private instanceIdCache?: string;

  constructor(private readonly h: AuthHarness) {}

  /** The running app's Db (a restart makes a new one). */
  get ds(): Db {
    return this.h.built.db;
  }

  get box(): SecretBox {
    return this.h.built.app.get<SecretBox>(SECRET_BOX);
  }

  async instanceId(): Promise<string> {
    if (!this.instanceIdCache) {
      const [row] = await this.ds.rows('SELECT id FROM instances WHERE is_default');
      this.instanceIdCache = row.id as string;
    }
    return this.instanceIdCache;
  }

  async client(opts: { grantTypes?: string[]; isPublic?: boolean; metadata?: Record<string, unknown> } = {}) {
    const id = randomUUID();
    const secret = opts.isPublic ? undefined : `s-${randomBytes(16).toString('hex')}`;
    await this.ds.rows(
      `INSERT INTO clients (id, instance_id, client_name, client_secret_enc, client_metadata, is_public)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6)`,
      [
        id,
        await this.instanceId(),
        uniq('client'),
        secret ? this.box.encrypt(secret, sealedIn.clientSecret(id)) : null,
        JSON.stringify({ grant_types: opts.grantTypes ?? ['client_credentials'], ...opts.metadata }),
        opts.isPublic ?? false,
      ],
    );
    return { id, secret } as TestClient;
  }

  async resource(
    opts: { scopes?: string[]; alg?: string; secret?: string; lifetime?: number; identifier?: string } = {},
  ): Promise<TestResource> {
    const id = randomUUID();
    const identifier = opts.identifier ?? `https://${uniq('api')}.test/`;
    await this.ds.rows(
      `INSERT INTO resources (id, instance_id, resource_type, resource_name, identifier_url, signing_algorithm,
                              signing_secret_enc, token_lifetime)
       VALUES ($1, $2, 'api', $3, $4, $5, $6, $7)`,
      [
        id,
        await this.instanceId(),
        uniq('resource'),
        identifier,
        opts.alg ?? 'RS256',
        opts.secret ? this.box.encrypt(opts.secret, sealedIn.resourceSigningSecret(id)) : null,
        opts.lifetime ?? 600,
      ],
    );
    const scopes: Record<string, string> = {};
    for (const name of opts.scopes ?? ['read', 'write']) {
      const [row] = await this.ds.rows(
        `INSERT INTO scopes (instance_id, resource_id, scope_name) VALUES ($1, $2, $3) RETURNING id`,
        [await this.instanceId(), id, name],
      );
      scopes[name] = row.id;
    }
    return { id, identifier, scopes };
  }

  /** Authorize the resource to the client and grant these scopes (names) on it. */
  async grant(client: TestClient, resource: TestResource, scopes: string[] = Object.keys(resource.scopes)) {
    const instanceId = await this.instanceId();
    await this.ds.rows(
      `INSERT INTO client_resources (instance_id, client_id, resource_id) VALUES ($1, $2, $3)
       ON CONFLICT (client_id, resource_id) DO NOTHING`,
      [instanceId, client.id, resource.id],
    );
    for (const s of scopes) {
      await this.ds.rows(
        `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT (client_id, scope_id) DO NOTHING`,
        [instanceId, client.id, resource.id, resource.scopes[s]],
      );
    }
  }

  async user(opts: { blocked?: boolean; profile?: Record<string, unknown> } = {}): Promise<TestUser> {
    const id = randomUUID();
    const tag = randomBytes(4).toString('hex');
    const u: TestUser = {
      id,
      email: `user-${tag}@auth.test`,
      userName: `user_${tag}`,
      phone: `+9769${String(parseInt(tag, 16) % 10_000_000).padStart(7, '0')}`,
      password: `pw-${randomBytes(6).toString('hex')}`,
    };
    const p = {
      given_name: 'Bat',
      family_name: 'Erdene',
      nickname: 'batka',
      locale: 'mn-MN',
      zoneinfo: 'Asia/Ulaanbaatar',
      address: { country: 'MN', locality: 'Ulaanbaatar', formatted: 'Ulaanbaatar, Mongolia' },
      ...opts.profile,
    };
    await this.ds.rows(
      `INSERT INTO users (id, instance_id, user_email, user_name, phone_number, password_hash, given_name, family_name,
                          nickname, locale, zoneinfo, address, email_verified, phone_verified, is_blocked)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, true, false, $13)`,
      [
        id,
        await this.instanceId(),
        u.email,
        u.userName,
        u.phone,
        await hashPassword(u.password),
        p.given_name,
        p.family_name,
        p.nickname,
        p.locale,
        p.zoneinfo,
        JSON.stringify(p.address),
        opts.blocked ?? false,
      ],
    );
    return u;
  }

  async setBlocked(userId: string, blocked: boolean) {
    await this.ds.rows('UPDATE users SET is_blocked = $2, updated_at = now() WHERE id = $1', [
      userId,
      blocked,
    ]);
  }
}

/** POST a token request as a form, or as JSON. */
export async function tokenRequest(
  url: string,
  params: Record<string, string>,
  opts: { json?: boolean; basic?: { id: string; secret: string } } = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const headers: Record<string, string> = {
    'content-type': opts.json ? 'application/json' : 'application/x-www-form-urlencoded',
  };
  if (opts.basic) {
    const enc = (s: string) => encodeURIComponent(s);
    headers.authorization = `Basic ${Buffer.from(`${enc(opts.basic.id)}:${enc(opts.basic.secret)}`).toString('base64')}`;
  }
  const res = await fetch(`${url}/token`, {
    method: 'POST',
    headers,
    body: opts.json ? JSON.stringify(params) : new URLSearchParams(params).toString(),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    headers: res.headers,
  };
}

export async function tokenInfo(
  url: string,
  token: string,
  auth: { bearer?: string; basic?: { id: string; secret: string } },
  extra: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (auth.bearer) headers.authorization = `Bearer ${auth.bearer}`;
  if (auth.basic)
    headers.authorization = `Basic ${Buffer.from(`${auth.basic.id}:${auth.basic.secret}`).toString('base64')}`;
  const res = await fetch(`${url}/tokeninfo`, {
    method: 'POST',
    headers,
    body: new URLSearchParams({ token, ...extra }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
