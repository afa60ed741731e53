import { iso, type Timestamp } from '@gatehouse/db';
import { auditAttributes, defineVersionedRecord } from '../common/records.js';
import type { ApiVersion } from '../common/version.js';

export const SCOPE_COLUMNS = `s.id, s.instance_id, s.resource_id, s.scope_name, s.scope_description, s.created_by,
  ${iso('s.created_at')} AS created_at, s.updated_by, ${iso('s.updated_at')} AS updated_at`;

/** A scope of a resource (document 1: `id`, `resource_id`, `scope_name`, `scope_description`, audit fields). */
export interface ScopeRecord {
  id: string;
  instance_id: string;
  resource_id: string;
  scope_name: string;
  scope_description: string | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

/** `scope_data` of a client permission: the scope without `instance_id`. */
export function scopeData(s: ScopeRecord) {
  const { instance_id: _i, ...data } = s;
  return data;
}

export const scopeSpecs = defineVersionedRecord({
  name: 'scope',
  attributes: [
    { name: 'id', column: 's.id', type: 'uuid' },
    { name: 'instance_id', column: 's.instance_id', type: 'uuid' },
    { name: 'resource_id', column: 's.resource_id', type: 'uuid' },
    { name: 'scope_name', column: 's.scope_name', type: 'string' },
    { name: 'scope_description', column: 's.scope_description', type: 'string' },
    ...auditAttributes('s'),
  ],
  children: { v1: [], v2: [] },
});

/** Scopes have one shape in both presentations (document 2 gives the same fields). */
export const shapeScope = (_v: ApiVersion) => (s: ScopeRecord) => ({ ...s }) as Record<string, unknown>;
