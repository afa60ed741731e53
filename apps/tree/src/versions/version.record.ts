import { defineRecord } from '@gatehouse/query';
import { versionPath } from '../common/links.js';
import type { NodeRecord } from '../nodes/node.record.js';

/** What `q`, `sort` and `fields` know about a tree version (SQL alias `v`). */
export const versionSpec = defineRecord({
  name: 'tree version',
  attributes: [
    { name: 'id', column: 'v.id', type: 'uuid' },
    { name: 'tree_id', column: 'v.tree_id', type: 'uuid' },
    { name: 'version', column: 'v.version', type: 'string' },
    { name: 'name', column: 'v.name', type: 'string' },
    { name: 'description', column: 'v.description', type: 'string' },
    { name: 'metadata', column: 'v.metadata', type: 'json' },
    { name: 'enabled', column: 'v.enabled', type: 'boolean' },
    { name: 'created_by', column: 'v.created_by', type: 'uuid' },
    { name: 'created_at', column: 'v.created_at', type: 'datetime' },
    { name: 'updated_by', column: 'v.updated_by', type: 'uuid' },
    { name: 'updated_at', column: 'v.updated_at', type: 'datetime' },
  ],
  children: ['nodes'],
  extraFields: ['aggregations', 'links'],
});

/**
 * `levels`: `tree_version_levels` reads the max depth from the version's own partition (its depth index); a subquery
 * on tree_nodes correlated with `v.id` would put every partition into the plan (migration 1790000300000).
 */
export const VERSION_COLUMNS = `v.id, v.tree_id, v.version, v.name, v.description, v.metadata, v.enabled,
  v.created_by, v.created_at, v.updated_by, v.updated_at, v.node_count, tree_version_levels(v.id) AS levels`;

export interface VersionRow {
  id: string;
  tree_id: string;
  version: string;
  name: string | null;
  description: string | null;
  metadata: Record<string, unknown>;
  enabled: boolean;
  created_by: string | null;
  created_at: Date;
  updated_by: string | null;
  updated_at: Date;
  node_count: number;
  levels: number;
  tr_name?: string | null;
  tr_description?: string | null;
}

export interface VersionRecord {
  id: string;
  tree_id: string;
  version: string;
  name: string | null;
  description: string | null;
  metadata: Record<string, unknown>;
  enabled: boolean;
  created_by: string | null;
  created_at: Date;
  updated_by: string | null;
  updated_at: Date;
  aggregations: {
    id: string;
    tree_version_id: string;
    levels: number;
    nodes: number;
    created_by: string | null;
    created_at: Date;
    updated_by: string | null;
    updated_at: Date;
  };
  nodes?: Partial<NodeRecord>[];
  links: Record<string, string>;
}

export function toVersionRecord(
  row: VersionRow,
  treeCode: string,
  nodes?: Partial<NodeRecord>[],
): VersionRecord {
  const self = versionPath(treeCode, row.version);
  const links: Record<string, string> = {
    self,
    translations: `${self}/translations`,
    export: `${self}/export`,
  };
  if (!nodes || nodes.length < row.node_count) links.nodes = `${self}/nodes`;
  const record: VersionRecord = {
    id: row.id,
    tree_id: row.tree_id,
    version: row.version,
    name: row.tr_name ?? row.name,
    description: row.tr_description ?? row.description,
    metadata: row.metadata,
    enabled: row.enabled,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_by: row.updated_by,
    updated_at: row.updated_at,
    aggregations: {
      id: row.id,
      tree_version_id: row.id,
      levels: row.levels,
      nodes: row.node_count,
      created_by: row.created_by,
      created_at: row.created_at,
      updated_by: row.updated_by,
      updated_at: row.updated_at,
    },
    links,
  };
  if (nodes) record.nodes = nodes;
  return record;
}
