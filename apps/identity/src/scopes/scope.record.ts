import type { ScopeRow } from '@gatehouse/identity-data';
import { auditAttributes, defineVersionedRecord } from '../common/records.js';
import type { ApiVersion } from '../common/version.js';

export { SCOPE_COLUMNS } from '@gatehouse/identity-data';

/** A scope of a resource (document 1: `id`, `resource_id`, `scope_name`, `scope_description`, audit fields): its row. */
export type ScopeRecord = ScopeRow;

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
