import { type RecordOf, type Timestamp } from '@gatehouse/db';
import { resourcesTable } from '@gatehouse/identity-data';

export { MD_V1, MD_V2 } from './resource.sql.js';
export { RESOURCE_COLUMNS } from '@gatehouse/identity-data';
import { defineVersionedRecord, type VersionedAttribute } from '../common/records.js';
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

/**
 * A resource as the service returns it: the record columns of the resources table (resourcesTable.record, so a
 * read-only column added there needs no edit here) with `resource_metadata`, made of the table's internal columns,
 * after `resource_description`; children only when expanded, aggregations only when wanted.
 */
export type ResourceRecord = RecordOf<typeof resourcesTable.columns> & {
  resource_metadata: ResourceMetadata;
  aggregations?: ResourceAggregations;
  scopes?: ScopeRecord[];
  /** The clients the resource is authorized to (each `authorized: true`). */
  clients?: ResourceClientRecord[];
};

export function resourceRecord(row: ResourceRow, secret?: string | null): ResourceRecord {
  return resourcesTable.record(row, 'resource_description', {
    resource_metadata: resourceMetadata(row, secret),
  });
}

export const RESOURCE_CHILDREN = ['scopes', 'clients'];

export const resourceSpecs = defineVersionedRecord({
  name: 'resource',
  attributes: resourcesTable.attributes<VersionedAttribute>(
    {},
    {
      resource_description: [
        { name: 'resource_metadata', column: MD_V1, v2Column: MD_V2, type: 'json', opaque: false },
      ],
    },
  ),
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
