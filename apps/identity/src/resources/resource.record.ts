import type { AppMetadataEntry } from '@gatehouse/identity-data';

export { MD_V1, MD_V2, RESOURCE_COLUMNS } from './resource.sql.js';
import { defineVersionedRecord } from '../common/records.js';
import { linksOf, mapKeys } from '../common/present.js';
import { apiBase, type ApiVersion } from '../common/version.js';
import { MD_V1, MD_V2 } from './resource.sql.js';
import type { ScopeRecord } from '../scopes/scope.record.js';
import { shapeResourceClient, type ResourceClientRecord } from '../client-access/resource-client.record.js';
import type { Timestamp } from '../common/sql-time.js';

export interface ResourceRow {
  id: string;
  instance_id: string;
  tenant_id: string | null;
  resource_type: string;
  resource_name: string;
  resource_description: string | null;
  identifier_url: string | null;
  is_system: boolean;
  signing_algorithm: string;
  signing_secret_enc: string | null;
  token_lifetime: number;
  rbac_enabled: boolean;
  scopes_added: boolean;
  skip_consent_for_first_party: boolean;
  app_metadata: AppMetadataEntry[];
  created_by: string | null;
  created_date: Timestamp;
  updated_by: string | null;
  updated_date: Timestamp;
}

/** Document 1's `resource_metadata` (the canonical form; v2 nests it differently). */
export interface ResourceMetadata {
  is_system: boolean;
  identifier_url: string | null;
  signing_algorithm: string;
  /** Only on single-record answers of an HS256 resource. */
  signing_secret?: string | null;
  token_lifetime: number;
  rbac_enabled: boolean;
  scopes_added: boolean;
  skip_consent_for_first_party: boolean;
}

/** Summary of a resource embedded in other records (`resource_data`); never carries the signing secret. */
export interface ResourceSummary {
  id: string;
  resource_type: string;
  resource_name: string;
  resource_description: string | null;
  resource_metadata: ResourceMetadata;
  app_metadata: AppMetadataEntry[];
  created_date: Timestamp;
  updated_date: Timestamp;
}

export function resourceMetadata(row: ResourceRow, secret?: string | null): ResourceMetadata {
  return {
    is_system: row.is_system,
    identifier_url: row.identifier_url,
    signing_algorithm: row.signing_algorithm,
    ...(secret !== undefined ? { signing_secret: secret } : {}),
    token_lifetime: row.token_lifetime,
    rbac_enabled: row.rbac_enabled,
    scopes_added: row.scopes_added,
    skip_consent_for_first_party: row.skip_consent_for_first_party,
  };
}

export function resourceSummary(row: ResourceRow): ResourceSummary {
  return {
    id: row.id,
    resource_type: row.resource_type,
    resource_name: row.resource_name,
    resource_description: row.resource_description,
    resource_metadata: resourceMetadata(row),
    app_metadata: row.app_metadata,
    created_date: row.created_date,
    updated_date: row.updated_date,
  };
}

/**
 * Document 2's `resource_metadata`: `api` {identifier_url, expiration_lifetime, is_system}, `token`
 * {expiration_lifetime, signing_algorithm, signing_secret}, `skip_consent_for_first_party`. Both lifetimes are the
 * access-token lifetime of the resource (`token_lifetime` of document 1).
 */
export function resourceMetadataV2(md: ResourceMetadata) {
  return {
    api: {
      identifier_url: md.identifier_url,
      expiration_lifetime: md.token_lifetime,
      is_system: md.is_system,
    },
    token: {
      expiration_lifetime: md.token_lifetime,
      signing_algorithm: md.signing_algorithm,
      ...(md.signing_secret !== undefined ? { signing_secret: md.signing_secret } : {}),
    },
    skip_consent_for_first_party: md.skip_consent_for_first_party,
  };
}

export function shapeResourceSummary(v: ApiVersion, s: ResourceSummary): Record<string, unknown> {
  return v === 'v1' ? { ...s } : { ...s, resource_metadata: resourceMetadataV2(s.resource_metadata) };
}

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
