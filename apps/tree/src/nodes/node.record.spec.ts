import { randomUUID } from 'node:crypto';
import type { VersionScope } from '../common/scope.js';
import { RAW, nodeJsonWriter, toNodeRecord, type NodeRow, type RawNodeRow } from './node.record.js';
import { encodePath } from './paths.js';

// The NDJSON stream writes its lines by hand; every line must be byte for byte the JSON of the record the JSON list
// returns (`toNodeRecord`), whichever writer (the whole record, or chosen fields) produced it.

const tricky = 'q " b \\ t \t n \n r \r bel \u0007 us \u001f del \u007f é 😀 \u2028 \u2029 </script> \u0000';

/** A node of `scope` as the stream reads it (the server's text of each column) and as the JSON list reads it. */
function node(
  scope: VersionScope,
  values: Partial<NodeRow>,
  childCount: number,
): { raw: RawNodeRow; row: NodeRow } {
  const row: NodeRow = {
    id: randomUUID(),
    tree_id: scope.treeId,
    tree_version_id: scope.versionId,
    code: 'C1',
    name: 'Name',
    description: 'A description',
    metadata: {},
    depth: 3,
    leaf: false,
    parent_id: randomUUID(),
    path: encodePath([1, 2, 3]),
    enabled: true,
    created_by: randomUUID(),
    created_at: new Date('2026-01-02T03:04:05.006Z'),
    updated_by: randomUUID(),
    updated_at: new Date('2026-11-28T23:59:59.999Z'),
    child_count: childCount,
    ...values,
  };
  const raw: RawNodeRow = [];
  raw[RAW.id] = row.id;
  raw[RAW.code] = row.code;
  raw[RAW.name] = row.tr_name ?? row.name;
  raw[RAW.description] = row.tr_description ?? row.description;
  // jsonb's own text: compared here in JSON.stringify's spelling, which the stream passes through unchanged.
  raw[RAW.metadata] = JSON.stringify(row.metadata);
  raw[RAW.depth] = String(row.depth);
  raw[RAW.leaf] = row.leaf ? 't' : 'f';
  raw[RAW.parent_id] = row.parent_id;
  raw[RAW.enabled] = row.enabled ? 't' : 'f';
  raw[RAW.created_by] = row.created_by;
  raw[RAW.created_at] = row.created_at.toJSON();
  raw[RAW.updated_by] = row.updated_by;
  raw[RAW.updated_at] = row.updated_at.toJSON();
  raw[RAW.k] = '\\x010203';
  return { raw, row };
}

const nodes = (scope: VersionScope) => [
  node(scope, {}, 7),
  node(
    scope,
    { code: tricky, name: tricky, description: tricky, metadata: { tags: ['x"y', tricky], n: [1.5, null] } },
    0,
  ),
  node(
    scope,
    { description: null, parent_id: null, created_by: null, updated_by: null, depth: 0, leaf: true },
    0,
  ),
  node(scope, { enabled: false, tr_name: 'Уай "1"', tr_description: null }, 12),
  node(scope, { name: '', code: '\\', description: '' }, 1),
];

const ALL = [
  'id',
  'tree_id',
  'tree_version_id',
  'code',
  'name',
  'description',
  'metadata',
  'depth',
  'leaf',
  'parent_id',
  'enabled',
  'created_by',
  'created_at',
  'updated_by',
  'updated_at',
  'aggregations',
  'links',
];

function pick(record: object, fields: readonly string[]): object {
  return Object.fromEntries(Object.entries(record).filter(([k]) => fields.includes(k)));
}

describe('nodeJsonWriter', () => {
  // Tree code and version with characters a URL path percent-encodes.
  const scopes: VersionScope[] = [
    { treeId: randomUUID(), treeCode: 'org', version: 'v1', versionId: randomUUID() },
    { treeId: randomUUID(), treeCode: 'a "b"/c é', version: "v 1's", versionId: randomUUID() },
  ];

  it.each([
    ['no fields', undefined],
    ['every field', ALL],
    ['every field, another order', [...ALL].reverse()],
    ['every field and child_nodes', [...ALL, 'child_nodes']],
    ['some fields', ['code', 'depth']],
    ['links and aggregations', ['name', 'links', 'aggregations']],
    ['texts and metadata', ['description', 'metadata', 'parent_id', 'created_by']],
    ['none', []],
  ])('writes the JSON of toNodeRecord, one line a node: %s', (_label, fields) => {
    for (const scope of scopes) {
      const write = nodeJsonWriter(fields, scope);
      for (const { raw, row } of nodes(scope)) {
        const record = toNodeRecord(row, scope);
        const expected = JSON.stringify(fields ? pick(record, fields) : record);
        expect(write(raw, row.child_count)).toBe(`${expected}\n`);
      }
    }
  });
});
