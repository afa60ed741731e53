import { randomUUID } from 'node:crypto';
import type { Db } from '@gatehouse/db';
import { DomainError, ErrorCode } from '@gatehouse/errors';
import type { TestDatabase } from '@gatehouse/testing';
import { openTreeDb, treeTestDatabase } from '../../test/support/db.js';
import { NO_PROBLEMS, treeProblems } from '../../test/support/consistency.js';
import { presentedNodes } from '../../test/support/presented.js';
import { DEFAULT_INSTANCE_KEY as I } from '../common/instance.js';
import { childPath, decodePath, encodePath as p, isInSubtree, pathLength, subtreeEnd } from './paths.js';

const actor = { id: null };

async function expectError(p: Promise<unknown>, code: ErrorCode, message?: RegExp) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect((err as DomainError).code).toBe(code);
  if (message) expect((err as DomainError).message).toMatch(message);
}

describe('path helpers', () => {
  it('bound a subtree', () => {
    expect(subtreeEnd(p([1, 5, 9]))).toEqual(p([1, 5, 10]));
    expect(subtreeEnd(p([1, 5, 255]))).toEqual(p([1, 5, 256]));
    expect(isInSubtree(p([1, 5, 9, 3]), p([1, 5, 9]))).toBe(true);
    expect(isInSubtree(p([1, 5, 9]), p([1, 5, 9]))).toBe(true);
    expect(isInSubtree(p([1, 5]), p([1, 5, 9]))).toBe(false);
    expect(isInSubtree(p([1, 6, 9]), p([1, 5, 9]))).toBe(false);
  });

  it('encode labels as 4 bytes big-endian, so byte order is label order', () => {
    expect(p([1, 258]).toString('hex')).toBe('0000000100000102');
    expect(decodePath(p([7, 2147483646, 0]))).toEqual([7, 2147483646, 0]);
    expect(pathLength(p([3, 4, 5]))).toBe(3);
    expect(childPath(p([3]), 4)).toEqual(p([3, 4]));
    const sorted = [[2], [1, 300], [1, 2, 3], [1, 256], [1]].map(p).sort(Buffer.compare).map(decodePath);
    expect(sorted).toEqual([[1], [1, 2, 3], [1, 256], [1, 300], [2]]);
  });
});

describe('NodesService against PostgreSQL', () => {
  let db: TestDatabase;
  let ds: Db;
  let svc: ReturnType<typeof presentedNodes>;

  beforeAll(async () => {
    db = await treeTestDatabase();
    ds = openTreeDb(db.url);
    svc = presentedNodes(ds);
  });
  afterAll(async () => {
    await ds?.close();
    await db?.drop();
  });

  /** A tree with one empty version, made with plain SQL. */
  async function version(): Promise<{ code: string; version: string; versionId: string }> {
    const code = `t-${randomUUID().slice(0, 8)}`;
    const [t] = await ds.rows(
      `INSERT INTO trees (instance_id, code, name) VALUES ($1, $2, $2) RETURNING id`,
      [I, code],
    );
    const [v] = await ds.rows(`INSERT INTO tree_versions (tree_id, version) VALUES ($1, 'v1') RETURNING id`, [
      t.id,
    ]);
    await ds.rows(`SELECT tree_nodes_add_partition($1)`, [v.id]); // as the versions service does
    return { code, version: 'v1', versionId: v.id };
  }

  it('creates roots and children with depth and leaf, and ids derived from the version and label', async () => {
    const v = await version();
    const root = await svc.write.create(I, v.code, v.version, { code: 'R', name: 'Root' }, actor, {});
    expect(root).toMatchObject({ code: 'R', depth: 0, leaf: true, parent_id: null });
    expect(root.id!.slice(0, 24)).toBe(v.versionId.slice(0, 24));
    const child = await svc.write.create(
      I,
      v.code,
      v.version,
      { code: 'C', name: 'Child', parent_id: root.id },
      actor,
      {},
    );
    expect(child).toMatchObject({ depth: 1, leaf: true, parent_id: root.id });
    const again = await svc.read.get(I, v.code, v.version, root.id!, {});
    expect(again).toMatchObject({ leaf: false, aggregations: { child_nodes: 1 } });
    expect(await treeProblems(ds, v.versionId)).toEqual(NO_PROBLEMS);
  });

  it('refuses duplicate codes (409), a parent of another version (400) and an unknown parent (400)', async () => {
    const v = await version();
    const w = await version();
    await svc.write.create(I, v.code, v.version, { code: 'A', name: 'A' }, actor, {});
    await expectError(
      svc.write.create(I, v.code, v.version, { code: 'A', name: 'again' }, actor, {}),
      ErrorCode.Conflict,
      /code/,
    );
    const foreign = await svc.write.create(I, w.code, w.version, { code: 'X', name: 'X' }, actor, {});
    await expectError(
      svc.write.create(I, v.code, v.version, { code: 'B', name: 'B', parent_id: foreign.id }, actor, {}),
      ErrorCode.InvalidRequest,
      /another tree version/,
    );
    await expectError(
      svc.write.create(I, v.code, v.version, { code: 'B', name: 'B', parent_id: randomUUID() }, actor, {}),
      ErrorCode.InvalidRequest,
      /parent_id/,
    );
    // Nothing was written by the failed attempts: the label counter and node count are unchanged.
    const [row] = await ds.rows(`SELECT next_label, node_count FROM tree_versions WHERE id = $1`, [
      v.versionId,
    ]);
    expect(row).toEqual({ next_label: 1, node_count: 1 });
  });

  it('moves a subtree set-based: paths, depths and leaf flags follow; cycles are 409', async () => {
    const v = await version();
    const mk = (code: string, parent_id?: string) =>
      svc.write.create(I, v.code, v.version, { code, name: code, parent_id }, actor, {}).then((n) => n.id!);
    const a = await mk('A');
    const b = await mk('B', a);
    const c = await mk('C', b);
    const d = await mk('D', c);
    const e = await mk('E');

    // Move B (with C, D) under E; the move itself stamps B's updated_by/updated_at (no second UPDATE of B).
    const mover = { id: '0b9d2c52-8a6f-4e1b-9c3d-7f00aa112233' };
    const before = await svc.read.get(I, v.code, v.version, b, {});
    const moved = await svc.write.update(I, v.code, v.version, b, { parent_id: e }, mover, {});
    expect(moved).toMatchObject({ parent_id: e, depth: 1, updated_by: mover.id });
    expect(new Date(moved.updated_at!).getTime()).toBeGreaterThanOrEqual(
      new Date(before.updated_at!).getTime(),
    );
    expect(await svc.read.get(I, v.code, v.version, c, {})).toMatchObject({ updated_by: null, depth: 2 });
    // A move with an attribute change in the same request does both.
    const renamed = await svc.write.update(I, v.code, v.version, b, { parent_id: a, name: 'B2' }, actor, {});
    expect(renamed).toMatchObject({ parent_id: a, name: 'B2', depth: 1 });
    await svc.write.update(I, v.code, v.version, b, { parent_id: e, name: 'B' }, actor, {});
    expect(await svc.read.get(I, v.code, v.version, d, {})).toMatchObject({ depth: 3 });
    expect(await svc.read.get(I, v.code, v.version, a, {})).toMatchObject({ leaf: true });
    expect(await svc.read.get(I, v.code, v.version, e, {})).toMatchObject({ leaf: false });

    // Under its own descendant, or itself: 409, nothing changes.
    await expectError(
      svc.write.update(I, v.code, v.version, b, { parent_id: d }, actor, {}),
      ErrorCode.Conflict,
      /descendant/,
    );
    await expectError(
      svc.write.update(I, v.code, v.version, b, { parent_id: b }, actor, {}),
      ErrorCode.Conflict,
      /own parent/,
    );

    // Make C a root: D follows to depth 1.
    await svc.write.update(I, v.code, v.version, c, { parent_id: null, name: 'C2' }, actor, {});
    expect(await svc.read.get(I, v.code, v.version, c, {})).toMatchObject({
      depth: 0,
      parent_id: null,
      name: 'C2',
    });
    expect(await svc.read.get(I, v.code, v.version, d, {})).toMatchObject({ depth: 1 });
    expect(await svc.read.get(I, v.code, v.version, b, {})).toMatchObject({ leaf: true });
    expect(await treeProblems(ds, v.versionId)).toEqual(NO_PROBLEMS);
  });

  it('deletes a leaf, refuses a parent (409) and deletes a subtree with cascade', async () => {
    const v = await version();
    const mk = (code: string, parent_id?: string) =>
      svc.write.create(I, v.code, v.version, { code, name: code, parent_id }, actor, {}).then((n) => n.id!);
    const a = await mk('A');
    const b = await mk('B', a);
    const c = await mk('C', b);
    await mk('D', b);
    await ds.rows(
      `INSERT INTO tree_node_translations (tree_version_id, tree_node_id, language, name) VALUES ($1, $2, 'mn_MN', 'c')`,
      [v.versionId, c],
    );
    await expectError(svc.write.remove(I, v.code, v.version, b, false), ErrorCode.Conflict, /cascade/);
    await svc.write.remove(I, v.code, v.version, c, false);
    await svc.write.remove(I, v.code, v.version, b, true);
    expect(await svc.read.get(I, v.code, v.version, a, {})).toMatchObject({ leaf: true });
    await expectError(svc.read.get(I, v.code, v.version, b, {}), ErrorCode.NotFound);
    const [{ n }] = await ds.rows(
      `SELECT count(*)::int AS n FROM tree_node_translations WHERE tree_version_id = $1`,
      [v.versionId],
    );
    expect(n).toBe(0);
    expect(await treeProblems(ds, v.versionId)).toEqual(NO_PROBLEMS);
  });

  it('clones a node, and deep-clones a subtree with suffixed codes and translations', async () => {
    const v = await version();
    const mk = (code: string, parent_id?: string) =>
      svc.write.create(I, v.code, v.version, { code, name: code, parent_id }, actor, {}).then((n) => n.id!);
    const a = await mk('A');
    const b = await mk('B', a);
    const c = await mk('C', b);
    await mk('D', c);
    await ds.rows(
      `INSERT INTO tree_node_translations (tree_version_id, tree_node_id, language, name) VALUES ($1, $2, 'mn_MN', 'Си')`,
      [v.versionId, c],
    );
    const flat = await svc.write.clone(
      I,
      v.code,
      v.version,
      b,
      { code: 'B1', name: 'B one' },
      false,
      actor,
      {},
    );
    expect(flat).toMatchObject({ code: 'B1', name: 'B one', parent_id: a, depth: 1, leaf: true });

    // Deep clone of B under its own descendant C: the copy is taken before it is inserted.
    const deep = await svc.write.clone(
      I,
      v.code,
      v.version,
      b,
      { code: 'B2', name: 'B two', parent_id: c },
      true,
      actor,
      {},
    );
    expect(deep).toMatchObject({ code: 'B2', parent_id: c, depth: 3, leaf: false });
    const sub = await svc.read.descendants(I, v.code, v.version, deep.id!, { total_count: 'true' });
    expect(sub.items.map((n) => [n.code, n.depth])).toEqual([
      ['C-copy-1', 4],
      ['D-copy-1', 5],
    ]);
    const copiedC = sub.items[0].id!;
    const tr = await ds.rows(`SELECT name FROM tree_node_translations WHERE tree_node_id = $1`, [copiedC]);
    expect(tr).toEqual([{ name: 'Си' }]);

    // A second deep clone picks the next free suffix.
    const again = await svc.write.clone(
      I,
      v.code,
      v.version,
      b,
      { code: 'B3', name: 'B three' },
      true,
      actor,
      {},
    );
    const sub2 = await svc.read.descendants(I, v.code, v.version, again.id!, {});
    expect(sub2.items.map((n) => n.code)).toEqual(expect.arrayContaining(['C-copy-2', 'D-copy-2']));
    await expectError(
      svc.write.clone(I, v.code, v.version, b, { code: 'A', name: 'dup' }, false, actor, {}),
      ErrorCode.Conflict,
    );
    expect(await treeProblems(ds, v.versionId)).toEqual(NO_PROBLEMS);
  });

  it('serves descendants depth-first with paging and total', async () => {
    const v = await version();
    const mk = (code: string, parent_id?: string) =>
      svc.write.create(I, v.code, v.version, { code, name: code, parent_id }, actor, {}).then((n) => n.id!);
    const r = await mk('R');
    const x = await mk('X', r);
    const y = await mk('Y', r);
    await mk('X1', x);
    await mk('Y1', y);
    await mk('X2', x);
    const all = await svc.read.descendants(I, v.code, v.version, r, { total_count: 'true' });
    expect(all.items.map((n) => n.code)).toEqual(['X', 'X1', 'X2', 'Y', 'Y1']);
    expect(all.total_count).toBe(5);
    const page = await svc.read.descendants(I, v.code, v.version, r, { offset: '3', limit: '1' });
    expect(page).toMatchObject({ count: 1, has_more: true, offset: 3, limit: 1 });
    expect(page.items[0].code).toBe('Y');
    const past = await svc.read.descendants(I, v.code, v.version, r, { offset: '50' });
    expect(past).toMatchObject({ count: 0, has_more: false, items: [] });
  });

  it('keeps the tree consistent under many parallel moves and inserts', async () => {
    const v = await version();
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const parent = i === 0 ? undefined : ids[Math.floor(Math.random() * ids.length)];
      ids.push(
        (
          await svc.write.create(
            I,
            v.code,
            v.version,
            { code: `N${i}`, name: `N${i}`, parent_id: parent },
            actor,
            {},
          )
        ).id!,
      );
    }
    const ops: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      const pick = () => ids[Math.floor(Math.random() * ids.length)];
      if (i % 4 === 0) {
        ops.push(
          svc.write.create(I, v.code, v.version, { code: `P${i}`, name: 'p', parent_id: pick() }, actor, {}),
        );
      } else {
        ops.push(
          svc.write.update(
            I,
            v.code,
            v.version,
            pick(),
            { parent_id: Math.random() < 0.1 ? null : pick() },
            actor,
            {},
          ),
        );
      }
    }
    const results = await Promise.allSettled(ops);
    for (const r of results) {
      if (r.status === 'rejected') {
        // The only acceptable failure: a move that would have made a cycle (or onto itself).
        expect(r.reason).toBeInstanceOf(DomainError);
        expect((r.reason as DomainError).code).toBe(ErrorCode.Conflict);
      }
    }
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeGreaterThan(50);
    expect(await treeProblems(ds, v.versionId)).toEqual(NO_PROBLEMS);
  });
});
