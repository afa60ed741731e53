// The token server's cache and its TokenServer, to stop its change feed and count its statements.
import { TokenServerApp as TokenServer } from '@gatehouse/token-server-testing';
import { Management, uniq } from './management-harness.js';
import { cacheClient, cacheResource, scopesOf, tokenRequest } from './token-cache-fixtures.js';
import { passwordClient } from './ticket-pages.js';

const PASSWORD = 'cache-password-1';

/**
 * The token server keeps client, client-resource, user and grant rows in memory across requests. Every
 * change below is made by ANOTHER pool (the identity app, through its API); the token server learns of it from the
 * change feed (LISTEN/NOTIFY, sent by triggers), and identity answers a change only once every live token server
 * has acknowledged it (the settle protocol), so the change counts from the very next request. With the feed down
 * the cache is not trusted: answers come from the database. A /tokeninfo of a cached JWT runs no statement at all.
 * (The same with the token server in its own OS process: token-cache.two-process.e2e.spec.ts.)
 */
const TTL_MS = 60_000;
let m: Management;
let tokenServer: TokenServer;

beforeAll(async () => {
  m = await Management.start({}, { AUTH_STATE_CACHE_TTL_MS: String(TTL_MS) });
  tokenServer = m.auth.built.app.get(TokenServer);
  // Its outbox worker polls the same pool on its own clock, which would count as statements of a /tokeninfo call
  // when a poll falls inside the window; nothing here sends a message.
  await (tokenServer as unknown as { delivery: { close(): Promise<void> } }).delivery.close();
});
afterAll(async () => {
  await m?.close();
});

/** A resource with scopes `read` and `write`, a client authorized and granted both. */
async function setup() {
  const api = await cacheResource(m, 'cache');
  const client = await cacheClient(m, 'cache', api.id, [api.scopes.read, api.scopes.write]);
  return { identifier: api.identifier, apiId: api.id, scopes: api.scopes, client };
}

/** The statements the token server's pool runs (and the connections it checks out) while `fn` runs. */
async function statementsOf(fn: () => Promise<void>): Promise<string[]> {
  const db = m.auth.built.db;
  const statements: string[] = [];
  const query = db.pool.query.bind(db.pool);
  const connect = db.pool.connect.bind(db.pool);
  db.pool.query = ((...args: Parameters<typeof query>) => {
    statements.push(String((args[0] as { text?: string })?.text ?? args[0]));
    return query(...args);
  }) as typeof query;
  db.pool.connect = ((...args: Parameters<typeof connect>) => {
    statements.push('connect');
    return connect(...args);
  }) as typeof connect;
  try {
    await fn();
  } finally {
    db.pool.query = query;
    db.pool.connect = connect;
  }
  return statements;
}

describe('the token server cache follows changes made by the identity service', () => {
  it('a rotated secret is refused from the request after the notification; the new one works', async () => {
    const s = await setup();
    // cached now
    expect((await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).token).toBeDefined();
    expect((await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).token).toBeDefined();
    const rotated = await m.call('post', `/api/v1/clients/${s.client.id}/rotate-secret`).expect(200);
    // the very next request: identity answered only once the token server had applied the change
    expect((await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).status === 401).toBe(true); // the old secret refused
    // and it stays refused
    expect((await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).error).toBe('invalid_client');
    const fresh = rotated.body.client_secret as string;
    expect((await tokenRequest(m, s.client.id, fresh, s.identifier)).token).toBeDefined();
  });

  it('a revoked permission is gone from the next token and from /tokeninfo of a token issued before', async () => {
    const s = await setup();
    const before = (await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).token!;
    expect(scopesOf(before)).toEqual(['read', 'write']);
    expect((await m.tokenInfo(before)).scope).toBe('read write');
    await m
      .call('delete', `/api/v2/clients/${s.client.id}/permissions`)
      .send({ permissions: [{ scopes: [s.scopes.write] }] })
      .expect(204);
    // the very next request: identity answered only once the token server had applied the change
    expect((await m.tokenInfo(before)).scope === 'read').toBe(true); // the revoked scope gone from /tokeninfo
    const after = (await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).token!;
    expect(scopesOf(after)).toEqual(['read']);
  });

  it("a deleted client's tokens are inactive and it gets no more", async () => {
    const s = await setup();
    const token = (await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).token!;
    expect((await m.tokenInfo(token)).active).toBe(true);
    await m.call('delete', `/api/v1/clients/${s.client.id}`).expect(204);
    // the very next request: identity answered only once the token server had applied the change
    expect((await m.tokenInfo(token)).active === false).toBe(true); // the deleted client's token inactive
    expect((await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).status).toBe(401);
  });

  it('/tokeninfo answers: an opaque token revoked at the token server, a JWT at its expiry', async () => {
    const s = await setup();
    const basic = { id: s.client.id, secret: s.client.secret };
    // opaque: its row decides, so its answer is computed every time (never reused)
    // (opaque is no choice of the API: set in SQL, then a change through the API, which settles after it)
    await m.identity.db.rows(
      `UPDATE resources SET signing_algorithm = 'opaque', token_lifetime = 3 WHERE id = $1`,
      [s.apiId],
    );
    await m.call('post', `/api/v1/resources/${s.apiId}/scopes`).send({ scope_name: 'settle' }).expect(201);
    const opaque = (await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).token!;
    expect(opaque.split('.')).toHaveLength(1);
    expect((await m.tokenInfo(opaque, basic)).active).toBe(true);
    expect((await m.tokenInfo(opaque, basic)).active).toBe(true);
    const revoke = await fetch(`${m.auth.url}/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: s.client.id, client_secret: s.client.secret, token: opaque }),
    });
    expect(revoke.status).toBe(200);
    expect((await m.tokenInfo(opaque, basic)).active).toBe(false);
    // a JWT's answer, given again from memory, ends with the token
    await m.identity.db.rows(`UPDATE resources SET signing_algorithm = 'ES256' WHERE id = $1`, [s.apiId]);
    await m.call('post', `/api/v1/resources/${s.apiId}/scopes`).send({ scope_name: 'settle2' }).expect(201);
    const jwt = (await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).token!;
    const described = await m.tokenInfo(jwt, basic);
    expect(described.active).toBe(true);
    expect((await m.tokenInfo(jwt, basic)).active).toBe(true);
    // Expiry is the rule under test: wait until the token's exp (whole seconds, as described) has passed.
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(String(described.exp)) - Date.now()) + 50));
    expect((await m.tokenInfo(jwt, basic)).active).toBe(false);
  });

  it('/tokeninfo of a cached JWT runs no statement; a change is still seen on the next call', async () => {
    const s = await setup();
    const token = (await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).token!;
    expect((await m.tokenInfo(token)).active).toBe(true);
    // the audit events of the token request are written now, not by the writer's timer while /tokeninfo is counted
    await tokenServer.events.flush();
    const statements = await statementsOf(async () => {
      for (let i = 0; i < 20; i++) {
        const info = await m.tokenInfo(token);
        expect(info).toMatchObject({ active: true, client_id: s.client.id, scope: 'read write' });
      }
    });
    expect(statements).toEqual([]);
    // (the count is real: an unknown opaque token is looked up in the store)
    expect(await statementsOf(async () => void (await m.tokenInfo('x'.repeat(43))))).not.toEqual([]);
    await m
      .call('delete', `/api/v1/resources/${s.apiId}/clients`)
      .send({ clients: [s.client.id] })
      .expect(204);
    // the very next request: identity answered only once the token server had applied the change
    expect((await m.tokenInfo(token)).active === false).toBe(true); // the token of a revoked authorization inactive
  });

  it("a user's JWT: a grant revoked through the identity API, a blocked user, a grant revoked at the token server", async () => {
    const a = await passwordClient(m);
    const user = async () => {
      const email = `${uniq('cache')}@example.test`;
      const u = (
        await m.call('post', '/api/v1/users').send({ user_email: email, password: PASSWORD }).expect(201)
      ).body as { id: string };
      const t = await a.login(email, PASSWORD);
      expect(t.access_token.split('.')).toHaveLength(3);
      // twice: the client, its access, the user and the grant are cached now
      expect((await m.tokenInfo(t.access_token)).active).toBe(true);
      // the second /tokeninfo of a user's JWT (its client, access, user and grant cached) runs no statement (the
      // sign-in's events written first: the event writer's timer would otherwise check out a connection meanwhile)
      await tokenServer.events.flush();
      expect(
        await statementsOf(async () => expect((await m.tokenInfo(t.access_token)).active).toBe(true)),
      ).toEqual([]);
      return { id: u.id, token: t.access_token, refresh: t.refresh_token! };
    };

    const revoked = await user();
    const grant = (await m.call('get', `/api/v1/users/${revoked.id}/grants`).expect(200)).body.items[0];
    await m.call('delete', `/api/v1/users/${revoked.id}/grants/${grant.id}`).expect(204);
    // the very next request: identity answered only once the token server had applied the change
    expect((await m.tokenInfo(revoked.token)).active === false).toBe(true); // the token of a grant revoked through the identity API inactive

    const blocked = await user();
    await m.call('post', `/api/v1/users/${blocked.id}/block`).expect(200);
    // the very next request: identity answered only once the token server had applied the change
    expect((await m.tokenInfo(blocked.token)).active === false).toBe(true); // a blocked user's token inactive

    // Revoking the refresh token at the token server revokes its grant: this process knows at once.
    const own = await user();
    const res = await fetch(`${m.auth.url}/revoke`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${a.id}:${a.secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token: own.refresh, token_type_hint: 'refresh_token' }).toString(),
    });
    expect(res.status).toBe(200);
    expect((await m.tokenInfo(own.token)).active).toBe(false);
  });

  it("a user's account (its claims) is read once, and a change through the identity API counts at once", async () => {
    const a = await passwordClient(m);
    const email = `${uniq('acct')}@example.test`;
    const u = (
      await m
        .call('post', '/api/v1/users')
        .send({ user_email: email, password: PASSWORD, user_nickname: 'before' })
        .expect(201)
    ).body as { id: string };
    const grant = async (params: Record<string, string>) => {
      const res = await fetch(`${m.auth.url}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${a.id}:${a.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams(params).toString(),
      });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    // The claims of a token (userinfo looks the account up, as the authorization and token endpoints do)
    const nicknameIn = async (accessToken: string) =>
      (
        (await (
          await fetch(`${m.auth.url}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } })
        ).json()) as { nickname?: string }
      ).nickname;
    const first = await grant({
      grant_type: 'password',
      username: email,
      password: PASSWORD,
      scope: 'openid profile offline_access',
    });
    expect(first.status).toBe(200);
    expect(await nicknameIn(first.body.access_token)).toBe('before');
    let refresh = first.body.refresh_token;
    const refreshed = async () => {
      const r = await grant({ grant_type: 'refresh_token', refresh_token: refresh });
      if (r.body.refresh_token) refresh = r.body.refresh_token;
      return r;
    };
    // the account is cached now: a refresh and a userinfo read no users row
    const accountReads = (statements: string[]) =>
      statements.filter((s) => /FROM users u WHERE u\.id = \$1/.test(s.replace(/\s+/g, ' ')));
    let again: Awaited<ReturnType<typeof refreshed>> | undefined;
    let seen: string | undefined;
    expect(
      accountReads(
        await statementsOf(async () => {
          again = await refreshed();
          seen = await nicknameIn(again.body.access_token);
        }),
      ),
    ).toEqual([]);
    expect(again!.status).toBe(200);
    expect(seen).toBe('before');

    // a change through the identity API: the very next token carries it
    await m.call('patch', `/api/v1/users/${u.id}`).send({ user_nickname: 'after' }).expect(200);
    const changed = await refreshed();
    expect(changed.status).toBe(200);
    expect(await nicknameIn(changed.body.access_token)).toBe('after');

    // blocked through the identity API: the very next refresh is refused
    await m.call('post', `/api/v1/users/${u.id}/block`).expect(200);
    const refused = await refreshed();
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
  });

  it("a returning user's MFA state is cached, and a client's policy made 'required' counts at the next authorization", async () => {
    const callback = 'http://127.0.0.1:9/cache-callback';
    const c = (
      await m
        .call('post', '/api/v1/clients')
        .send({
          client_name: uniq('web'),
          client_type: 'regular_web',
          is_first_party: true,
          client_metadata: { grant_types: ['authorization_code'], urls: { callbacks: [callback] } },
        })
        .expect(201)
    ).body as { id: string };
    const email = `${uniq('mfa')}@example.test`;
    await m.call('post', '/api/v1/users').send({ user_email: email, password: PASSWORD }).expect(201);

    // A browser over plain HTTP: one cookie jar, redirects followed on the token server.
    const origin = m.auth.url;
    const cookies = new Map<string, string>();
    const walk = async (url: string, form?: Record<string, string>) => {
      let at = url;
      let body = form ? new URLSearchParams(form).toString() : undefined;
      for (let hop = 0; hop < 12; hop++) {
        const res = await fetch(at, {
          method: body ? 'POST' : 'GET',
          redirect: 'manual',
          headers: {
            accept: 'text/html',
            cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
            ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          },
          body,
        });
        for (const line of res.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const eq = pair.indexOf('=');
          cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
        }
        const html = await res.text();
        if (res.status < 300 || res.status >= 400) return { url: at, html };
        at = new URL(res.headers.get('location') ?? '', at).toString();
        body = undefined;
        if (!at.startsWith(`${origin}/`)) return { url: at, html: '' };
      }
      throw new Error('too many redirects');
    };
    const authorize = () => {
      const u = new URL(`${origin}/authorize`);
      u.search = new URLSearchParams({
        client_id: c.id,
        response_type: 'code',
        redirect_uri: callback,
        scope: 'openid',
        state: uniq('s'),
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      }).toString();
      return walk(u.toString());
    };

    const login = await authorize();
    const formAction = /<form\b[^>]*\baction="([^"]*\/login)"/.exec(login.html)?.[1];
    expect(formAction).toBeDefined();
    const signedIn = await walk(new URL(formAction!.replace(/&amp;/g, '&'), login.url).toString(), {
      csrf: /name="csrf" value="([^"]*)"/.exec(login.html)?.[1] ?? '',
      username: email,
      password: PASSWORD,
    });
    expect(signedIn.url.startsWith(callback)).toBe(true);

    // the returning user: straight back with a code; the MFA state is cached now (no statement reads it)
    const mfaReads = (statements: string[]) => statements.filter((s) => s.includes('AS policy'));
    let back = '';
    expect(mfaReads(await statementsOf(async () => void (back = (await authorize()).url)))).toEqual([]);
    expect(back.startsWith(callback)).toBe(true);

    // the client's policy tightened through the identity API: the very next authorization asks for a factor
    await m.call('patch', `/api/v1/clients/${c.id}`).send({ mfa: 'required' }).expect(200);
    const asked = await authorize();
    expect(asked.url.startsWith(`${origin}/interaction/`)).toBe(true);
    expect(asked.url.startsWith(callback)).toBe(false);
  });

  it('with the change feed down the cache is not used: a change counts at once', async () => {
    const s = await setup();
    const token = (await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).token!;
    expect((await m.tokenInfo(token)).scope).toBe('read write');
    // Stopped for good (the last test of this file): no notification reaches this token server any more.
    await tokenServer.feed!.stop();
    expect(tokenServer.feed!.trusted()).toBe(false);
    await m
      .call('delete', `/api/v2/clients/${s.client.id}/permissions`)
      .send({ permissions: [{ scopes: [s.scopes.write] }] })
      .expect(204);
    expect((await m.tokenInfo(token)).scope).toBe('read');
    expect((await m.tokenInfo(token)).scope).toBe('read');
    expect(scopesOf((await tokenRequest(m, s.client.id, s.client.secret, s.identifier)).token!)).toEqual([
      'read',
    ]);
  });
});
