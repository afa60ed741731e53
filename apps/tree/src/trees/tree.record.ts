import { defineRecord } from '@gatehouse/query';
import { treePath } from '../common/links.js';
import type { VersionRecord } from '../versions/version.record.js';

/** What `q`, `sort` and `fields` know about a tree (SQL alias `t`). */
export const treeSpec = defineRecord({
  name: 'tree',
  attributes: [
    { name: 'id', column: 't.id', type: 'uuid' },
    { name: 'code', column: 't.code', type: 'string' },
    { name: 'name', column: 't.name', type: 'string' },
    { name: 'description', column: 't.description', type: 'string' },
    { name: 'metadata', column: 't.metadata', type: 'json' },
    { name: 'enabled', column: 't.enabled', type: 'boolean' },
    { name: 'created_by', column: 't.created_by', type: 'uuid' },
    { name: 'created_at', column: 't.created_at', type: 'datetime' },
    { name: 'updated_by', column: 't.updated_by', type: 'uuid' },
    { name: 'updated_at', column: 't.updated_at', type: 'datetime' },
    { name: 'created_date', column: 't.created_at', type: 'datetime' },
    { name: 'updated_date', column: 't.updated_at', type: 'datetime' },
  ],
  children: ['versions'],
  extraFields: ['aggregations', 'links'],
});

export const TREE_COLUMNS = `t.id, t.code, t.name, t.description, t.metadata, t.enabled,
  t.created_by, t.created_at, t.updated_by, t.updated_at,
  (SELECT count(*)::int FROM tree_versions cv WHERE cv.tree_id = t.id) AS version_count,
  (SELECT coalesce(sum(cv.node_count), 0)::int FROM tree_versions cv WHERE cv.tree_id = t.id) AS node_count`;

export interface TreeRow {
  id: string;
  code: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  enabled: boolean;
  created_by: string | null;
  created_at: Date;
  updated_by: string | null;
  updated_at: Date;
  version_count: number;
  node_count: number;
  tr_name?: string | null;
  tr_description?: string | null;
}

export interface TreeRecord {
  id: string;
  code: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  enabled: boolean;
  created_by: string | null;
  created_at: Date;
  updated_by: string | null;
  updated_at: Date;
  created_date: Date;
  updated_date: Date;
  aggregations: {
    id: string;
    tree_id: string;
    versions: number;
    nodes: number;
    created_by: string | null;
    created_at: Date;
    updated_by: string | null;
    updated_at: Date;
  };
  versions?: VersionRecord[];
  links: Record<string, string>;
}

export function toTreeRecord(row: TreeRow, versions?: VersionRecord[]): TreeRecord {
  const self = treePath(row.code);
  const links: Record<string, string> = { self, translations: `${self}/translations` };
  if (!versions || versions.length < row.version_count) links.versions = `${self}/versions`;
  const record: TreeRecord = {
    id: row.id,
    code: row.code,
    name: row.tr_name ?? row.name,
    description: row.tr_description ?? row.description,
    metadata: row.metadata,
    enabled: row.enabled,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_by: row.updated_by,
    updated_at: row.updated_at,
    created_date: row.created_at,
    updated_date: row.updated_at,
    aggregations: {
      id: row.id,
      tree_id: row.id,
      versions: row.version_count,
      nodes: row.node_count,
      created_by: row.created_by,
      created_at: row.created_at,
      updated_by: row.updated_by,
      updated_at: row.updated_at,
    },
    links,
  };
  if (versions) record.versions = versions;
  return record;
}
