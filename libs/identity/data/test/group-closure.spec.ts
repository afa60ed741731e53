import { randomInt } from 'node:crypto';
import type { Db } from '@gatehouse/db';
import type { TestDatabase } from '@gatehouse/testing';
import {
  addGroupToClosure,
  detachGroup,
  effectiveUserScopes,
  lockNesting,
  nestGroup,
  unnestGroup,
} from '../src/index.js';
import { identityTestDatabase, openDb, uniq } from './support.js';

/**
 * group_closure against a brute-force count of nesting paths, after every one of many random nestings,
 * un-nestings and group deletions (a DAG: a group may have several parents); cycles are refused.
 */
describe('group ancestry (group_closure)', () => {
  let database: TestDatabase;
  let db: Db;
  let instanceId: string;

  beforeAll(async () => {
    database = await identityTestDatabase();
    db = await openDb(database.url);
    instanceId = (await db.one<{ id: string }>(`INSERT INTO instances (name) VALUES ($1) RETURNING id`, [
      uniq('inst'),
    ]))!.id;
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const newGroup = async () => {
    const g = (await db.one<{ id: string; instance_id: string }>(
      `INSERT INTO groups (instance_id, group_name) VALUES ($1, $2) RETURNING id, instance_id`,
      [instanceId, uniq('g')],
    ))!;
    await addGroupToClosure(db, g);
    return g.id;
  };

  /** paths(a, d) by walking the nesting edges. */
  function expected(groups: string[], edges: [string, string][]): Map<string, number> {
    const children = new Map<string, string[]>();
    for (const [p, c] of edges) children.set(p, [...(children.get(p) ?? []), c]);
    const out = new Map<string, number>();
    const walk = (ancestor: string, at: string) => {
      const key = `${ancestor}>${at}`;
      out.set(key, (out.get(key) ?? 0) + 1);
      for (const c of children.get(at) ?? []) walk(ancestor, c);
    };
    for (const g of groups) walk(g, g);
    return out;
  }

  async function actual(): Promise<Map<string, number>> {
    const rows = await db.rows<{ ancestor_id: string; descendant_id: string; paths: string }>(
      `SELECT ancestor_id, descendant_id, paths FROM group_closure WHERE instance_id = $1`,
      [instanceId],
    );
    return new Map(rows.map((r) => [`${r.ancestor_id}>${r.descendant_id}`, Number(r.paths)]));
  }

  it('matches the path counts after 300 random operations', async () => {
    const groups: string[] = [];
    for (let i = 0; i < 12; i++) groups.push(await newGroup());
    let edges: [string, string][] = [];
    const reaches = (from: string, to: string): boolean =>
      from === to || edges.some(([p, c]) => p === from && reaches(c, to));
    let refused = 0;
    for (let step = 0; step < 300; step++) {
      const op = randomInt(10);
      const parent = groups[randomInt(groups.length)];
      const child = groups[randomInt(groups.length)];
      await db.transaction(async (tx) => {
        await lockNesting(tx, instanceId);
        if (op < 6) {
          const cycle = reaches(child, parent);
          try {
            const added = await nestGroup(tx, { id: parent, instance_id: instanceId }, { id: child }, null);
            expect(cycle).toBe(false);
            if (added) edges.push([parent, child]);
          } catch (err) {
            expect(cycle).toBe(true);
            expect((err as { code?: string }).code).toBe('conflict');
            refused++;
          }
        } else if (op < 9 && edges.length) {
          const [p, c] = edges[randomInt(edges.length)];
          expect(await unnestGroup(tx, p, c)).toBe(true);
          edges = edges.filter(([a, b]) => !(a === p && b === c));
        } else if (op === 9 && groups.length > 4) {
          const victim = groups[randomInt(groups.length)];
          await detachGroup(tx, victim);
          await tx.exec(`DELETE FROM groups WHERE id = $1`, [victim]);
          groups.splice(groups.indexOf(victim), 1);
          edges = edges.filter(([a, b]) => a !== victim && b !== victim);
          groups.push(await newGroupIn(tx));
        }
      });
      expect(await actual()).toEqual(expected(groups, edges));
    }
    expect(refused).toBeGreaterThan(0);

    async function newGroupIn(tx: Parameters<Parameters<Db['transaction']>[0]>[0]) {
      const g = (await tx.one<{ id: string; instance_id: string }>(
        `INSERT INTO groups (instance_id, group_name) VALUES ($1, $2) RETURNING id, instance_id`,
        [instanceId, uniq('g')],
      ))!;
      await addGroupToClosure(tx, g);
      return g.id;
    }
  });

  it('effectiveUserScopes: a role of an ancestor group reaches a member of a descendant, one query', async () => {
    const [top, mid, leaf] = [await newGroup(), await newGroup(), await newGroup()];
    const user = (await db.one<{ id: string }>(
      `INSERT INTO users (instance_id, user_email) VALUES ($1, $2) RETURNING id`,
      [instanceId, `${uniq('u')}@example.test`],
    ))!.id;
    const resource = (await db.one<{ id: string }>(
      `INSERT INTO resources (instance_id, resource_type, resource_name, identifier_url, rbac_enabled)
       VALUES ($1, 'api', $2, $3, true) RETURNING id`,
      [instanceId, uniq('r'), `urn:${uniq('r')}`],
    ))!.id;
    const scope = (await db.one<{ id: string }>(
      `INSERT INTO scopes (instance_id, resource_id, scope_name) VALUES ($1, $2, 'x:read') RETURNING id`,
      [instanceId, resource],
    ))!.id;
    const role = (await db.one<{ id: string }>(
      `INSERT INTO roles (instance_id, role_name) VALUES ($1, $2) RETURNING id`,
      [instanceId, uniq('role')],
    ))!.id;
    await db.exec(
      `INSERT INTO role_permissions (instance_id, role_id, resource_id, scope_id) VALUES ($1, $2, $3, $4)`,
      [instanceId, role, resource, scope],
    );
    await db.exec(`INSERT INTO group_roles (instance_id, group_id, role_id) VALUES ($1, $2, $3)`, [
      instanceId,
      top,
      role,
    ]);
    await db.exec(`INSERT INTO group_members (instance_id, group_id, user_id) VALUES ($1, $2, $3)`, [
      instanceId,
      leaf,
      user,
    ]);
    expect(await effectiveUserScopes(db, user, resource)).toEqual([]);
    await db.transaction(async (tx) => {
      await nestGroup(tx, { id: top, instance_id: instanceId }, { id: mid }, null);
      await nestGroup(tx, { id: mid, instance_id: instanceId }, { id: leaf }, null);
    });
    expect(await effectiveUserScopes(db, user, resource)).toEqual(['x:read']);
    await db.transaction((tx) => unnestGroup(tx, mid, leaf));
    expect(await effectiveUserScopes(db, user, resource)).toEqual([]);
    expect(await effectiveUserScopes(db, 'not-a-uuid', resource)).toEqual([]);
  });
});
