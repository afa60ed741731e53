import { type Timestamp } from '@gatehouse/db';
import { auditAttributes, defineVersionedRecord } from '../common/records.js';
import type { ApiVersion } from '../common/version.js';
import { shapeResourceSummary, type ResourceSummary } from '../resources/resource-summary.js';
import { MD_V1, resourceDataJson } from '../resources/resource.sql.js';
import type { scopeData } from '../scopes/scope.record.js';

/** A scope of a resource granted to a client (document 1's Client Permission). */
export interface ClientPermissionRecord {
  id: string;
  client_id: string;
  resource_id: string;
  scope_id: string;
  resource_data: ResourceSummary;
  scope_data: ReturnType<typeof scopeData>;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

const SCOPE_DATA = `jsonb_build_object('id', s.id, 'resource_id', s.resource_id, 'scope_name', s.scope_name,
  'scope_description', s.scope_description, 'created_by', s.created_by, 'created_at', s.created_at,
  'updated_by', s.updated_by, 'updated_at', s.updated_at)`;

export const clientPermissionSpecs = defineVersionedRecord({
  name: 'client_permission',
  attributes: [
    { name: 'id', column: 'p.id', type: 'uuid' },
    { name: 'client_id', column: 'p.client_id', type: 'uuid' },
    { name: 'resource_id', column: 'p.resource_id', type: 'uuid' },
    { name: 'scope_id', column: 'p.scope_id', type: 'uuid' },
    { name: 'resource_data', column: resourceDataJson(MD_V1), type: 'json', opaque: false, only: 'v1' },
    { name: 'scope_data', column: SCOPE_DATA, type: 'json', opaque: false, only: 'v1' },
    ...auditAttributes('p'),
  ],
  children: { v1: [], v2: [] },
});

/** Document 2's permission record: `id`, `client_id`, `resource_id`, `scope_id` and the audit fields. */
export const shapeClientPermission =
  (v: ApiVersion) =>
  (rec: ClientPermissionRecord): Record<string, unknown> => {
    if (v === 'v1') return { ...rec, resource_data: shapeResourceSummary(v, rec.resource_data) };
    const { resource_data: _r, scope_data: _s, ...rest } = rec;
    return rest;
  };
