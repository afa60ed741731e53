// The SDK against the real services, started as `npm start` starts them (each app built with swc and run in its own
// process; services.mjs): tokens from the token server, typed calls to identity and tree, errors, refresh rotation,
// pagination over both presentations. Records are made through the SDK itself with the bootstrap client.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import {
  GatehouseError,
  MANAGEMENT_AUDIENCE,
  RefreshingTokens,
  TREE_AUDIENCE,
  clientCredentials,
  createGatehouse,
  paginate,
  paginateV2,
  unwrap,
  type Gatehouse,
  type Tokens,
} from '../src/index.js';
import { startServices, type RunningServices } from '../scripts/services.mjs';

let services: RunningServices;
let gh: Gatehouse;
/** Every call to the token server's /token made by the SDK's token helpers of this file. */
const tokenCalls: string[] = [];
const countingFetch: typeof fetch = (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  if (url.endsWith('/token')) tokenCalls.push(String(init?.body ?? ''));
  return fetch(input, init);
};

const uniq = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;

beforeAll(async () => {
  services = await startServices();
  gh = createGatehouse({
    authUrl: services.authUrl,
    identityUrl: services.identityUrl,
    treeUrl: services.treeUrl,
    token: clientCredentials({
      authUrl: services.authUrl,
      clientId: services.clientId,
      clientSecret: services.clientSecret,
      fetch: countingFetch,
    }),
  });
}, 180_000);

afterAll(async () => {
  await services?.stop();
});

describe('client credentials and typed calls', () => {
  it('lists clients at identity and trees at tree, one token per audience, cached', async () => {
    tokenCalls.length = 0;
    const clients = unwrap(await gh.identity.GET('/api/v1/clients', { params: { query: { limit: 100 } } }));
    expect(clients.items.map((c) => c.id)).toContain(services.clientId);
    const code = uniq('t');
    const tree = unwrap(await gh.tree.POST('/api/v1/trees', { body: { code, name: 'SDK tree' } }));
    expect(tree.code).toBe(code);
    const trees = unwrap(
      await gh.tree.GET('/api/v1/trees', { params: { query: { q: `code = '${code}'` } } }),
    );
    expect(trees.items.map((t) => t.code)).toEqual([code]);
    unwrap(await gh.identity.GET('/api/v2/clients', { params: { query: { limit: 1 } } }));
    // one client_credentials request for the management API, one for the tree API; the rest from the cache
    expect(tokenCalls).toHaveLength(2);
    expect(tokenCalls.map((b) => new URLSearchParams(b).get('audience')).sort()).toEqual([
      MANAGEMENT_AUDIENCE,
      'urn:gatehouse:tree',
    ]);
  });

  it('concurrent first requests share one token request', async () => {
    tokenCalls.length = 0;
    const source = clientCredentials({
      authUrl: services.authUrl,
      clientId: services.clientId,
      clientSecret: services.clientSecret,
      audience: MANAGEMENT_AUDIENCE,
      scope: 'clients:read',
      fetch: countingFetch,
    });
    const tokens = await Promise.all([source(), source(), source()]);
    expect(new Set(tokens).size).toBe(1);
    expect(tokenCalls).toHaveLength(1);
    const scoped = createGatehouse({ ...urls(), token: source });
    // the scope asked for is the token's: reading works, writing is 403
    unwrap(await scoped.identity.GET('/api/v1/clients'));
    const denied = await scoped.identity.POST('/api/v1/clients', { body: { client_name: uniq('no') } });
    expect(() => unwrap(denied)).toThrow(GatehouseError);
    expect(denied.response.status).toBe(403);
  });
});

function urls() {
  return { authUrl: services.authUrl, identityUrl: services.identityUrl, treeUrl: services.treeUrl };
}

/** What unwrap throws for a call. */
async function failure(p: Promise<{ data?: unknown; error?: unknown; response: Response }>) {
  const r = await p;
  try {
    unwrap(r);
  } catch (err) {
    return err as GatehouseError;
  }
  throw new Error(`expected a failure, got ${r.response.status}`);
}

describe('errors', () => {
  it('a 404 of identity is a GatehouseError with the typed error object', async () => {
    const err = await failure(
      gh.identity.GET('/api/v1/clients/{client_id}', {
        params: { path: { client_id: '00000000-0000-4000-8000-000000000000' } },
      }),
    );
    expect(err).toBeInstanceOf(GatehouseError);
    expect(err.status).toBe(404);
    expect(err.body).toEqual({ code: 'not_found', message: expect.any(String) });
    expect(err.code).toBe('not_found');
  });

  it('a 400 names the unknown field; a 409 of tree is a conflict', async () => {
    const bad = await failure(
      gh.identity.POST('/api/v1/clients', {
        body: { client_name: uniq('x'), no_such_field: 1 } as never,
      }),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_request');
    expect(bad.body.message).toContain('no_such_field');

    const code = uniq('dup');
    unwrap(await gh.tree.POST('/api/v1/trees', { body: { code, name: 'one' } }));
    const dup = await failure(gh.tree.POST('/api/v1/trees', { body: { code, name: 'two' } }));
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('conflict');
  });

  it('a missing token is 401 unauthorized; bad client credentials are invalid_client', async () => {
    const anonymous = createGatehouse(urls());
    const err = await failure(anonymous.identity.GET('/api/v1/clients'));
    expect(err.status).toBe(401);
    expect(err.body.code).toBe('unauthorized');
    expect(err.response?.headers.get('www-authenticate')).toMatch(/^Bearer/);

    const wrong = clientCredentials({
      authUrl: services.authUrl,
      clientId: services.clientId,
      clientSecret: 'not-the-secret',
      audience: MANAGEMENT_AUDIENCE,
    });
    const refused = await Promise.resolve()
      .then(() => wrong())
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatehouseError);
    expect((refused as GatehouseError).status).toBe(401);
    expect((refused as GatehouseError).body).toMatchObject({
      code: 'invalid_client',
      error: 'invalid_client',
    });
  });
});

/** A resource, a client allowed the password and refresh_token grants on it, and a user with a password. */
async function userClient(opts: { isPublic: boolean }) {
  const identifier = `https://${uniq('api')}.sdk.test`;
  const resource = unwrap(
    await gh.identity.POST('/api/v1/resources', {
      body: {
        resource_name: uniq('API'),
        resource_type: 'api',
        resource_metadata: { identifier_url: identifier },
      },
    }),
  );
  const client = unwrap(
    await gh.identity.POST('/api/v2/clients', {
      body: {
        client_name: uniq('app'),
        is_public: opts.isPublic,
        client_metadata: { grant_types: ['password', 'refresh_token'] },
      },
    }),
  );
  unwrap(
    await gh.identity.POST('/api/v1/clients/{client_id}/resources', {
      params: { path: { client_id: client.id } },
      body: { resources: [resource.id] },
    }),
  );
  const email = `${uniq('user')}@sdk.test`;
  const password = `Pw-${randomBytes(9).toString('hex')}`;
  unwrap(await gh.identity.POST('/api/v2/users', { body: { user_email: email, password } }));
  const secret = (client as { client_secret?: string | null }).client_secret ?? undefined;
  // the first tokens: the password grant through the typed auth client (a JSON body, Basic or client_id alone)
  const first = await gh.auth.POST('/token', {
    body: {
      grant_type: 'password',
      username: email,
      password,
      audience: identifier,
      scope: 'offline_access',
      ...(secret ? {} : { client_id: client.id }),
    },
    headers: secret
      ? { authorization: `Basic ${Buffer.from(`${client.id}:${secret}`).toString('base64')}` }
      : {},
  });
  const tokens = unwrap(first) as Tokens;
  expect(tokens.refresh_token).toEqual(expect.any(String));
  return { clientId: client.id, clientSecret: secret, tokens };
}

describe('refresh rotation', () => {
  for (const kind of ['confidential', 'public'] as const) {
    it(`${kind} client: a refresh rotates the refresh token and the old one is refused`, async () => {
      const { clientId, clientSecret, tokens } = await userClient({ isPublic: kind === 'public' });
      expect(clientSecret === undefined).toBe(kind === 'public');
      const changes: (Tokens | undefined)[] = [];
      const rt = new RefreshingTokens({
        authUrl: services.authUrl,
        clientId,
        ...(clientSecret ? { clientSecret } : {}),
        fetch: countingFetch,
        onChange: (t) => changes.push(t),
      });
      rt.set(tokens);
      expect(await rt.token()).toBe(tokens.access_token);

      const next = await rt.refresh();
      expect(next.refresh_token).toEqual(expect.any(String));
      expect(next.refresh_token).not.toBe(tokens.refresh_token);
      expect(next.access_token).not.toBe(tokens.access_token);
      expect(await rt.token()).toBe(next.access_token);

      // the old refresh token is refused: invalid_grant (and the reuse revokes the grant, so the new one dies too)
      const reuse = new RefreshingTokens({ authUrl: services.authUrl, clientId, clientSecret });
      reuse.set(tokens);
      const refused = await reuse.refresh().catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(GatehouseError);
      expect((refused as GatehouseError).body).toMatchObject({
        code: 'invalid_grant',
        error: 'invalid_grant',
      });
      expect(reuse.current).toBeUndefined();

      const after = await rt.refresh().catch((e: unknown) => e);
      expect((after as GatehouseError).body.code).toBe('invalid_grant');
      expect(rt.current).toBeUndefined();
      expect(await rt.token()).toBeUndefined();
      expect(changes.map((c) => c?.refresh_token)).toEqual([
        tokens.refresh_token,
        next.refresh_token,
        undefined,
      ]);
    });
  }

  it('concurrent callers of an expiring token share one refresh request', async () => {
    const { clientId, clientSecret, tokens } = await userClient({ isPublic: false });
    const rt = new RefreshingTokens({
      authUrl: services.authUrl,
      clientId,
      clientSecret,
      fetch: countingFetch,
    });
    // the access token is about to expire: token() refreshes first
    rt.set({ ...tokens, expires_at: Date.now() + 1000 });
    tokenCalls.length = 0;
    const got = await Promise.all([rt.token(), rt.token(), rt.refresh(), rt.token(), rt.refresh()]);
    expect(tokenCalls).toHaveLength(1);
    expect(new URLSearchParams(tokenCalls[0]).get('grant_type')).toBe('refresh_token');
    const access = rt.current!.access_token;
    expect(access).not.toBe(tokens.access_token);
    expect(got.map((g) => (typeof g === 'string' ? g : g?.access_token))).toEqual([
      access,
      access,
      access,
      access,
      access,
    ]);
    // and the rotated refresh token still works (no second use of the old one happened)
    const before = rt.current!.refresh_token;
    const again = await rt.refresh();
    expect(again.refresh_token).not.toBe(before);
    expect(tokenCalls).toHaveLength(2);
  });
});

describe('pagination over both presentations', () => {
  it('identity v1 and v2: every client once, pages of 7, and a page with its total', async () => {
    const prefix = uniq('pg');
    const made = new Set<string>();
    for (let i = 0; i < 23; i++) {
      const c = unwrap(
        await gh.identity.POST('/api/v1/clients', {
          body: { client_name: `${prefix}-${String(i).padStart(2, '0')}` },
        }),
      );
      made.add(c.id);
    }
    const q = `client_name like '${prefix}-%'`;
    const v1 = paginate((page) =>
      gh.identity.GET('/api/v1/clients', { params: { query: { ...page, q, sort: 'client_name:asc' } } }),
    );
    const v2 = paginateV2((page) =>
      gh.identity.GET('/api/v2/clients', { params: { query: { ...page, q, sort: 'client_name:desc' } } }),
    );
    for (const [name, p] of [
      ['v1', v1],
      ['v2', v2],
    ] as const) {
      const ids: string[] = [];
      let pages = 0;
      for await (const page of p.pages({ limit: 7 })) {
        pages++;
        ids.push(...page.items.map((c) => c.id));
      }
      expect({ name, pages }).toEqual({ name, pages: 4 });
      expect(ids).toHaveLength(23);
      expect(new Set(ids)).toEqual(made);

      const seen: string[] = [];
      for await (const c of p.items({ limit: 5, offset: 3 })) seen.push(c.id);
      expect(seen).toEqual(ids.slice(3));

      const one = await p.page({ offset: 20, limit: 7 });
      expect(one.total).toBe(23);
      expect(one.items.map((c) => c.id)).toEqual(ids.slice(20));
      expect(one.hasMore).toBe(false);
      expect((await p.all()).map((c) => c.id)).toEqual(ids);
    }
    // the two presentations order by their own sort: v2 asked descending
    const asc = (await v1.all()).map((c) => c.client_name);
    const desc = (await v2.all()).map((c) => c.client_name);
    expect(desc).toEqual([...asc].reverse());
  });

  it('tree nodes: every node once across pages', async () => {
    const code = uniq('pt');
    unwrap(await gh.tree.POST('/api/v1/trees', { body: { code, name: 'paged' } }));
    const path = { tree_code: code, tree_version: 'v1' };
    const root = unwrap(
      await gh.tree.POST('/api/v1/trees/{tree_code}/versions/{tree_version}/nodes', {
        params: { path },
        body: { code: 'root', name: 'Root' },
      }),
    );
    for (let i = 0; i < 11; i++) {
      unwrap(
        await gh.tree.POST('/api/v1/trees/{tree_code}/versions/{tree_version}/nodes', {
          params: { path },
          body: { code: `n${i}`, name: `Node ${i}`, parent_id: root.id },
        }),
      );
    }
    const nodes = paginate((page) =>
      gh.tree.GET('/api/v1/trees/{tree_code}/versions/{tree_version}/nodes', {
        params: { path, query: { ...page, sort: 'code:asc' } },
      }),
    );
    const codes: string[] = [];
    for await (const n of nodes.items({ limit: 4 })) codes.push(n.code);
    // a new tree has a root node of its own code; then ours: 13 nodes, each once, in the order asked
    const expected = [code, 'root', ...Array.from({ length: 11 }, (_, i) => `n${i}`)].sort();
    expect(codes).toEqual(expected);
    const { total, items } = await nodes.page({ limit: 4 });
    expect(total).toBe(13);
    expect(items.map((n) => n.code)).toEqual(codes.slice(0, 4));
  });
});

/** A browser's part of the authorization code flow over plain HTTP: cookies, redirects on the token server, forms. */
async function signInThroughPages(authorizeUrl: string, username: string, password: string): Promise<string> {
  const origin = new URL(services.authUrl).origin;
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
      if (res.status < 300 || res.status >= 400) return { url: at, html, status: res.status };
      at = new URL(res.headers.get('location') ?? '', at).toString();
      body = undefined;
      if (!at.startsWith(`${origin}/`)) return { url: at, html: '', status: res.status };
    }
    throw new Error('too many redirects');
  };
  const action = (html: string, base: string, pattern: RegExp) => {
    for (const m of html.matchAll(/<form\b[^>]*\baction="([^"]+)"/g)) {
      const u = new URL(m[1].replace(/&amp;/g, '&'), base);
      if (pattern.test(u.pathname)) return u.toString();
    }
    throw new Error(`no form ${pattern} on ${base}: ${html.slice(0, 400)}`);
  };
  const csrf = (html: string) => /name="csrf" value="([^"]*)"/.exec(html)?.[1] ?? '';
  const login = await walk(authorizeUrl);
  expect(login.status).toBe(200);
  let page = await walk(action(login.html, login.url, /\/login$/), {
    csrf: csrf(login.html),
    username,
    password,
  });
  if (page.status === 200 && /\/consent/.test(page.html)) {
    page = await walk(action(page.html, page.url, /\/consent$/), {
      csrf: csrf(page.html),
      decision: 'allow',
    });
  }
  return page.url;
}

describe('a user signed in with the authorization code flow (public client, PKCE)', () => {
  it('gets tokens for identity and tree from one grant, rotates, and signs out with revoke', async () => {
    const callback = 'http://127.0.0.1:9/sdk-callback';
    const client = unwrap(
      await gh.identity.POST('/api/v1/clients', {
        body: {
          client_name: uniq('spa'),
          is_public: true,
          is_first_party: true,
          client_metadata: {
            grant_types: ['authorization_code', 'refresh_token'],
            urls: { callbacks: [callback] },
          },
        },
      }),
    );
    const systems = (
      await paginate((page) => gh.identity.GET('/api/v1/resources', { params: { query: page } })).all()
    )
      .filter((r) => r.resource_metadata.is_system)
      .map((r) => r.id);
    expect(systems).toHaveLength(2);
    unwrap(
      await gh.identity.POST('/api/v1/clients/{client_id}/resources', {
        params: { path: { client_id: client.id } },
        body: { resources: systems },
      }),
    );
    const permissions = [];
    for (const id of systems) {
      const scopes = await paginate((page) =>
        gh.identity.GET('/api/v1/resources/{resource_id}/scopes', {
          params: { path: { resource_id: id }, query: page },
        }),
      ).all();
      permissions.push({ resource_id: id, scopes: scopes.map((x) => x.id) });
    }
    unwrap(
      await gh.identity.POST('/api/v1/clients/{client_id}/permissions', {
        params: { path: { client_id: client.id } },
        body: { permissions },
      }),
    );
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const authorize = new URL(`${services.authUrl}/authorize`);
    authorize.search = new URLSearchParams({
      client_id: client.id,
      response_type: 'code',
      redirect_uri: callback,
      // the API scopes asked for; each access token carries those of its own API
      scope: 'openid offline_access clients:read trees:read',
      prompt: 'consent',
      state: 'st',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    authorize.searchParams.append('resource', MANAGEMENT_AUDIENCE);
    authorize.searchParams.append('resource', TREE_AUDIENCE);
    const back = new URL(
      await signInThroughPages(authorize.toString(), services.adminEmail, services.adminPassword),
    );
    expect(`${back.origin}${back.pathname}`).toBe(callback);
    const code = back.searchParams.get('code');
    expect(code).toEqual(expect.any(String));

    const rt = new RefreshingTokens({
      authUrl: services.authUrl,
      clientId: client.id,
      audiences: [MANAGEMENT_AUDIENCE, TREE_AUDIENCE],
      fetch: countingFetch,
    });
    const first = await rt.authorizationCode({
      code: code!,
      codeVerifier: verifier,
      redirectUri: callback,
      audience: MANAGEMENT_AUDIENCE,
    });
    expect(first.refresh_token).toEqual(expect.any(String));
    const user = createGatehouse({ ...urls(), token: rt.token });
    // the bootstrap admin reads clients with its own token; tree asks for a token of the tree API (one refresh)
    tokenCalls.length = 0;
    unwrap(await user.identity.GET('/api/v1/clients', { params: { query: { limit: 1 } } }));
    expect(tokenCalls).toHaveLength(0);
    unwrap(await user.tree.GET('/api/v1/trees', { params: { query: { limit: 1 } } }));
    expect(tokenCalls.map((b) => new URLSearchParams(b).get('resource'))).toEqual([TREE_AUDIENCE]);
    expect(rt.current!.refresh_token).not.toBe(first.refresh_token);
    // cached: no second refresh for tree
    await user.tree.GET('/api/v1/trees', { params: { query: { limit: 1 } } });
    expect(tokenCalls).toHaveLength(1);

    const last = rt.current!.refresh_token!;
    await rt.revoke();
    expect(rt.current).toBeUndefined();
    const again = new RefreshingTokens({ authUrl: services.authUrl, clientId: client.id });
    again.set({ access_token: 'x', refresh_token: last });
    const refused = await again.refresh().catch((e: unknown) => e);
    expect((refused as GatehouseError).body.code).toBe('invalid_grant');
  });
});
