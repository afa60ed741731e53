import { type Timestamp } from '@gatehouse/db';
import { auditAttributes, defineVersionedRecord } from '../common/records.js';
import type { ApiVersion } from '../common/version.js';
import { shapeResourceSummary, type ResourceSummary } from '../resources/resource-summary.js';
import { MD_V1, MD_V2, resourceDataJson } from '../resources/resource.sql.js';

/** A resource authorized to a client (document 1's Client Resource). */
export interface ClientResourceRecord {
  id: string;
  client_id: string;
  resource_id: string;
  resource_data: ResourceSummary;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

export const clientResourceSpecs = defineVersionedRecord({
  name: 'client_resource',
  attributes: [
    { name: 'id', column: 'cr.id', type: 'uuid' },
    { name: 'client_id', column: 'cr.client_id', type: 'uuid' },
    { name: 'resource_id', column: 'cr.resource_id', type: 'uuid' },
    {
      name: 'resource_data',
      column: resourceDataJson(MD_V1),
      v2Column: resourceDataJson(MD_V2),
      type: 'json',
      opaque: false,
    },
    ...auditAttributes('cr'),
  ],
  children: { v1: [], v2: [] },
});

export const shapeClientResource =
  (v: ApiVersion) =>
  (rec: ClientResourceRecord): Record<string, unknown> => ({
    ...rec,
    resource_data: shapeResourceSummary(v, rec.resource_data),
  });
