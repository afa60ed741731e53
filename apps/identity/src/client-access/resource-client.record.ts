import { type Timestamp } from '@gatehouse/db';
import { defineVersionedRecord } from '../common/records.js';
import type { ApiVersion } from '../common/version.js';
import { clientData, type ClientRecord } from '../clients/client.record.js';

/**
 * A client as seen from a resource (document 1's Resource Client): `authorized` tells whether the resource is
 * authorized to it; `id` and the audit fields are those of the authorization (null when not authorized).
 */
export interface ResourceClientRecord {
  id: string | null;
  resource_id: string;
  client_id: string;
  client_data: ClientRecord;
  authorized: boolean;
  created_by: string | null;
  created_at: Timestamp | null;
  updated_by: string | null;
  updated_at: Timestamp | null;
}

export const resourceClientSpecs = defineVersionedRecord({
  name: 'resource_client',
  attributes: [
    { name: 'id', column: 'cr.id', type: 'uuid' },
    { name: 'resource_id', column: 'r.id', type: 'uuid' },
    { name: 'client_id', column: 'c.id', type: 'uuid' },
    { name: 'authorized', column: '(cr.id IS NOT NULL)', type: 'boolean' },
    { name: 'created_by', column: 'cr.created_by', type: 'uuid' },
    { name: 'created_at', column: 'cr.created_at', type: 'datetime' },
    { name: 'updated_by', column: 'cr.updated_by', type: 'uuid' },
    { name: 'updated_at', column: 'cr.updated_at', type: 'datetime' },
  ],
  children: { v1: [], v2: [] },
  extraFields: [{ name: 'client_data' }],
});

export const shapeResourceClient =
  (v: ApiVersion) =>
  (rec: ResourceClientRecord): Record<string, unknown> => ({
    ...rec,
    client_data: clientData(v, rec.client_data),
  });
