import { commonEnv, loadEnv } from '@gatehouse/config';
import { buildService, type BuiltService } from '@gatehouse/service';
import type { TestDatabase } from '@gatehouse/testing';
import request from 'supertest';
import { treeEnv } from '../../src/config.js';
import { TREE_AUDIENCE } from '../../src/common/scopes.js';
import { treeService } from '../../src/tree.service-definition.js';
import { treeTestDatabase } from './db.js';
import type { TokenServer } from '@gatehouse/token-server-testing';

export type TreeEnv = ReturnType<typeof loadTreeEnv>;

export function loadTreeEnv(vars: Record<string, string>) {
  return loadEnv(
    { ...commonEnv, ...treeEnv },
    { LOG_LEVEL: 'silent', RATE_LIMIT_POINTS: '1000000', ...vars },
  );
}

export interface TreeApp {
  db: TestDatabase;
  built: BuiltService<TreeEnv>;
  http: ReturnType<BuiltService<TreeEnv>['app']['getHttpServer']>;
  close(): Promise<void>;
}

/** apps/tree built exactly as main.ts builds it (migrations, Nest app, bearer guard) on a fresh test database. */
export async function startTree(authUrl: string, vars: Record<string, string> = {}): Promise<TreeApp> {
  const db = await treeTestDatabase();
  const env = loadTreeEnv({ TREE_DATABASE_URL: db.url, AUTH_URL: authUrl, ...vars });
  const built = (await buildService(treeService, env)) as BuiltService<TreeEnv>;
  return {
    db,
    built,
    http: built.app.getHttpServer(),
    close: async () => {
      await built.close();
      await db.drop();
    },
  };
}

/** apps/tree on a given database URL (the caller owns the database). */
export async function startTreeOn(databaseUrl: string, authUrl: string, vars: Record<string, string> = {}) {
  const env = loadTreeEnv({ TREE_DATABASE_URL: databaseUrl, AUTH_URL: authUrl, ...vars });
  const built = (await buildService(treeService, env)) as BuiltService<TreeEnv>;
  return { built, http: built.app.getHttpServer() };
}

/** Tokens for the tree API: every scope, read only, and one for another API. */
export async function treeTokens(auth: TokenServer) {
  return {
    all: await auth.token(TREE_AUDIENCE),
    read: await auth.token(TREE_AUDIENCE, 'trees:read'),
    write: await auth.token(TREE_AUDIENCE, 'trees:read trees:write'),
    management: await auth.token('urn:gatehouse:management'),
  };
}

/** A supertest agent that sends the token on every request. */
export function client(http: TreeApp['http'], token: string) {
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${token}`);
  return {
    get: (path: string) => auth(request(http).get(path)),
    post: (path: string, body?: object) => auth(request(http).post(path)).send(body ?? {}),
    patch: (path: string, body?: object) => auth(request(http).patch(path)).send(body ?? {}),
    delete: (path: string) => auth(request(http).delete(path)),
    put: (path: string, body?: object) => auth(request(http).put(path)).send(body ?? {}),
    raw: (method: 'get' | 'post' | 'patch' | 'delete' | 'put', path: string) =>
      auth(request(http)[method](path)),
  };
}

export type Client = ReturnType<typeof client>;

let seq = 0;
/** A unique code for this test run. */
export function uniq(prefix: string): string {
  seq += 1;
  return `${prefix}-${Date.now().toString(36)}-${seq}`;
}
