import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Db } from '@gatehouse/db';
import type { TestDatabase } from '@gatehouse/testing';
import type { QueryRunner } from 'typeorm';
import { LogStreamScopes1795900100000 } from '../src/migrations/1795900100000-log-stream-scopes.js';
import { bootstrapIdentity, MANAGEMENT_AUDIENCE, type BootstrapLogger } from '../src/index.js';
import { identityTestDatabase, openDb } from './support.js';

const silent: BootstrapLogger = { info: () => undefined, warn: () => undefined };

// A database from before the log streams' scopes took ../shared/API.md's names (`logs:read` to read,
// `log_streams:write` to change): the migration keeps every grant.
describe('migration LogStreamScopes1795900100000', () => {
  let db: TestDatabase;
  let ds: Db;
  let dataDir: string;
  let clientId = '';
  let resourceId = '';
  const scopeNames = async () =>
    (
      await ds.rows<{ scope_name: string }>(
        `SELECT scope_name FROM scopes WHERE resource_id = $1 AND scope_name LIKE 'log%' ORDER BY 1`,
        [resourceId],
      )
    ).map((r) => r.scope_name);
  const held = async () =>
    (
      await ds.rows<{ scope_name: string; scope_id: string }>(
        `SELECT s.scope_name, s.id AS scope_id FROM client_permissions p JOIN scopes s ON s.id = p.scope_id
          WHERE p.client_id = $1 AND s.scope_name LIKE 'log%' ORDER BY 1`,
        [clientId],
      )
    ).map((r) => r.scope_name);

  beforeAll(async () => {
    db = await identityTestDatabase();
    ds = await openDb(db.url);
    dataDir = mkdtempSync(path.join(tmpdir(), 'gh-logscopes-'));
    await bootstrapIdentity(ds, { DATA_DIR: dataDir }, silent, { print: () => undefined });
    [{ id: resourceId }] = await ds.rows<{ id: string }>(
      `SELECT id FROM resources WHERE is_system AND identifier_url = $1`,
      [MANAGEMENT_AUDIENCE],
    );
    // the default client, as an older release left it: the two old scopes, and no logs:read
    [{ client_id: clientId }] = await ds.rows<{ client_id: string }>(
      `SELECT p.client_id FROM client_permissions p JOIN scopes s ON s.id = p.scope_id
        WHERE s.scope_name = 'log_streams:write' LIMIT 1`,
    );
    await ds.exec(
      `UPDATE scopes SET scope_name = 'log-streams:write' WHERE resource_id = $1 AND scope_name = 'log_streams:write'`,
      [resourceId],
    );
    const [{ id: oldRead }] = await ds.rows<{ id: string }>(
      `INSERT INTO scopes (instance_id, resource_id, scope_name, scope_description)
       SELECT instance_id, id, 'log-streams:read', 'Read log-streams' FROM resources WHERE id = $1 RETURNING id`,
      [resourceId],
    );
    await ds.exec(
      `INSERT INTO client_permissions (instance_id, client_id, resource_id, scope_id)
       SELECT instance_id, $1, $2, $3 FROM resources WHERE id = $2`,
      [clientId, resourceId, oldRead],
    );
    await ds.exec(
      `DELETE FROM client_permissions p USING scopes s
        WHERE p.client_id = $1 AND s.id = p.scope_id AND s.scope_name = 'logs:read'`,
      [clientId],
    );
  });

  afterAll(async () => {
    await ds.close();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("renames the write scope in place and moves the read scope's holders to logs:read", async () => {
    expect(await scopeNames()).toEqual(['log-streams:read', 'log-streams:write', 'logs:read']);
    expect(await held()).toEqual(['log-streams:read', 'log-streams:write']);
    const [{ id: writeId }] = await ds.rows<{ id: string }>(
      `SELECT id FROM scopes WHERE resource_id = $1 AND scope_name = 'log-streams:write'`,
      [resourceId],
    );
    const runner = { query: (text: string) => ds.rows(text) } as unknown as QueryRunner;
    await new LogStreamScopes1795900100000().up(runner);
    expect(await scopeNames()).toEqual(['log_streams:write', 'logs:read']);
    expect(await held()).toEqual(['log_streams:write', 'logs:read']);
    // the same scope row: every grant of it stayed where it was
    const [{ id: renamed }] = await ds.rows<{ id: string }>(
      `SELECT id FROM scopes WHERE resource_id = $1 AND scope_name = 'log_streams:write'`,
      [resourceId],
    );
    expect(renamed).toBe(writeId);
    // run again (a second replica's start): nothing changes
    await new LogStreamScopes1795900100000().up(runner);
    expect(await held()).toEqual(['log_streams:write', 'logs:read']);
  });
});
