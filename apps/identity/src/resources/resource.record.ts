import { type Timestamp } from '@gatehouse/db';
import type { AppMetadataEntry } from '@gatehouse/identity-data';

export { MD_V1, MD_V2 } from './resource.sql.js';
export { RESOURCE_COLUMNS } from '@gatehouse/identity-data';
import { defineVersionedRecord } from '../common/records.js';
import { linksOf, mapKeys } from '@gatehouse/query';
import { apiBase, type ApiVersion } from '../common/version.js';
import { MD_V1, MD_V2 } from './resource.sql.js';
import type { ScopeRecord } from '../scopes/scope.record.js';
import { shapeResourceClient, type ResourceClientRecord } from '../client-access/resource-client.record.js';

export * from './resource-summary.js';
import {
  resourceMetadata,
  resourceMetadataV2,
  type ResourceMetadata,
  type ResourceRow,
} from './resource-summary.js';

export interface ResourceAggregations {
  id: string;
  resource_id: string;
  scopes: number;
  clients: number;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

/** A resource as the service returns it; children only when expanded, aggregations only when wanted. */
export interface ResourceRecord {
  id: string;
  instance_id: string;
  tenant_id: string | null;
  resource_type: string;
  resource_name: string;
  resource_description: string | null;
  resource_metadata: ResourceMetadata;
  app_metadata: AppMetadataEntry[];
  created_by: string | null;
  created_date: Timestamp;
  updated_by: string | null;
  updated_date: Timestamp;
  aggregations?: ResourceAggregations;
  scopes?: ScopeRecord[];
  /** The clients the resource is authorized to (each `authorized: true`). */
  clients?: ResourceClientRecord[];
}

export function resourceRecord(row: ResourceRow, secret?: string | null): ResourceRecord {
  return {
    id: row.id,
    instance_id: row.instance_id,
    tenant_id: row.tenant_id,
    resource_type: row.resource_type,
    resource_name: row.resource_name,
    resource_description: row.resource_description,
    resource_metadata: resourceMetadata(row, secret),
    app_metadata: row.app_metadata,
    created_by: row.created_by,
    created_date: row.created_date,
    updated_by: row.updated_by,
    updated_date: row.updated_date,
  };
}

export const RESOURCE_CHILDREN = ['scopes', 'clients'];

export const resourceSpecs = defineVersionedRecord({
  name: 'resource',
  attributes: [
    { name: 'id', column: 'r.id', type: 'uuid' },
    { name: 'instance_id', column: 'r.instance_id', type: 'uuid' },
    { name: 'tenant_id', column: 'r.tenant_id', type: 'uuid' },
    { name: 'resource_type', column: 'r.resource_type', type: 'string' },
    { name: 'resource_name', column: 'r.resource_name', type: 'string' },
    { name: 'resource_description', column: 'r.resource_description', type: 'string' },
    { name: 'resource_metadata', column: MD_V1, v2Column: MD_V2, type: 'json', opaque: false },
    { name: 'app_metadata', column: 'r.app_metadata', type: 'json' },
    { name: 'created_by', column: 'r.created_by', type: 'uuid' },
    { name: 'created_date', column: 'r.created_date', type: 'datetime' },
    { name: 'updated_by', column: 'r.updated_by', type: 'uuid' },
    { name: 'updated_date', column: 'r.updated_date', type: 'datetime' },
  ],
  children: { v1: RESOURCE_CHILDREN, v2: RESOURCE_CHILDREN },
  extraFields: [{ name: 'aggregations', v2Name: 'aggregates' }, { name: 'links' }],
});

/** The Resource of a presentation: v2 nests `resource_metadata` and says `aggregates`. */
export function shapeResource(v: ApiVersion) {
  return (rec: ResourceRecord, expand: boolean): Record<string, unknown> => {
    const base = mapKeys(rec, {
      resource_metadata: (md: ResourceMetadata) => [
        'resource_metadata',
        v === 'v1' ? md : resourceMetadataV2(md),
      ],
      aggregations: (a: ResourceAggregations) => [v === 'v1' ? 'aggregations' : 'aggregates', a],
      scopes: (items: ScopeRecord[]) => ['scopes', items.map((s) => ({ ...s }))],
      clients: (items: ResourceClientRecord[]) => ['clients', items.map(shapeResourceClient(v))],
    });
    if (!expand) base.links = linksOf(`${apiBase(v)}/resources/${rec.id}`, RESOURCE_CHILDREN);
    return base;
  };
}
