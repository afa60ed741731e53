import { type RecordOf, type Timestamp } from '@gatehouse/db';
import { clientsTable, type ClientMetadata, type ClientRow } from '@gatehouse/identity-data';

export { CLIENT_COLUMNS, type ClientRow } from '@gatehouse/identity-data';
import { defineVersionedRecord, type VersionedAttribute } from '../common/records.js';
import { linksOf, mapKeys } from '@gatehouse/query';
import { apiBase, type ApiVersion } from '../common/version.js';
import { shapeClientResource, type ClientResourceRecord } from '../client-access/client-resource.record.js';
import {
  shapeClientPermission,
  type ClientPermissionRecord,
} from '../client-access/client-permission.record.js';

/** Keys of `client_metadata` in document 1 (common client metadata). */
export const CLIENT_METADATA_V1_KEYS = [
  'grant_types',
  'urls',
  'refresh_token',
  'id_token',
  'oauth',
  'saml',
  'wsfed',
];
/** Keys of `client_metadata` in document 2 (`app_type` is the client type). */
export const CLIENT_METADATA_V2_KEYS = ['app_type', 'grant_types', 'refresh_token', 'mobile'];

export interface ClientAggregations {
  id: string;
  client_id: string;
  resources: number;
  permissions: number;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

/**
 * A client as the service returns it: the columns of the clients table (but is_default, internal), copied by
 * clientsTable.record, so a read-only column added there needs no edit here. `client_metadata` is the stored
 * object (every key either presentation may have set); `client_secret` only on single-record answers; children
 * only when expanded.
 */
export type ClientRecord = RecordOf<typeof clientsTable.columns> & {
  client_secret?: string | null;
  aggregations?: ClientAggregations;
  resources?: ClientResourceRecord[];
  permissions?: ClientPermissionRecord[];
};

/** The record of a row; `client_secret` after `client_name` when given (as documents 1 and 2 place it). */
export function clientRecord(row: ClientRow, secret?: string | null): ClientRecord {
  const rec: ClientRecord = clientsTable.record(
    row,
    'client_name',
    secret !== undefined ? { client_secret: secret } : undefined,
  );
  rec.client_metadata = row.client_metadata ?? {};
  rec.app_metadata = row.app_metadata ?? [];
  return rec;
}

/** The keys of `o` that are set, in the order of `keys` (a loop: this runs for every record of every list). */
function pick(o: Record<string, unknown>, keys: readonly string[], out: Record<string, unknown> = {}) {
  for (const k of keys) {
    const value = o[k];
    if (value !== undefined) out[k] = value;
  }
  return out;
}

const V2_OWN_KEYS = CLIENT_METADATA_V2_KEYS.filter((k) => k !== 'app_type');

/** `client_metadata` of a presentation: v1 its own keys, v2 `app_type` (the client type) and its own keys. */
export function clientMetadataOf(v: ApiVersion, md: ClientMetadata, clientType: string | null) {
  if (v === 'v1') return pick(md, CLIENT_METADATA_V1_KEYS);
  // app_type is the client type, not a stored key (a stored one is ignored); it comes first, as in document 2
  return pick(md, V2_OWN_KEYS, clientType != null ? { app_type: clientType } : {});
}

export const CLIENT_CHILDREN: Record<ApiVersion, string[]> = {
  v1: ['resources', 'permissions'],
  v2: ['resources', 'permissions'],
};

/**
 * The two presentations differ as docs/contract.md says: v2 says `aggregates`, and its `client_metadata` is document 2's
 * (`app_type`, `grant_types`, `refresh_token`, `mobile`), where `app_type` is the client type: v2 has no
 * `client_type` field of its own.
 */
export function shapeClient(v: ApiVersion) {
  return (rec: ClientRecord, expand: boolean): Record<string, unknown> => {
    const base = mapKeys(rec, {
      client_metadata: (md: ClientMetadata) => ['client_metadata', clientMetadataOf(v, md, rec.client_type)],
      aggregations: (a: ClientAggregations) => [v === 'v1' ? 'aggregations' : 'aggregates', a],
      resources: (items: ClientResourceRecord[]) => ['resources', items.map(shapeClientResource(v))],
      ...(v === 'v2' ? { client_type: null } : {}),
      permissions: (items: ClientPermissionRecord[]) => ['permissions', items.map(shapeClientPermission(v))],
    });
    if (!expand) base.links = linksOf(`${apiBase(v)}/clients/${rec.id}`, CLIENT_CHILDREN[v]);
    return base;
  };
}

/** `client_data` of a Resource Client: the client record without children, aggregations or secret. */
export function clientData(v: ApiVersion, rec: ClientRecord): Record<string, unknown> {
  const { client_secret: _s, aggregations: _a, resources: _r, permissions: _p, ...plain } = rec;
  const shaped = shapeClient(v)(plain, true);
  return shaped;
}

const CLIENT_MD_V2 = `(c.client_metadata || jsonb_strip_nulls(jsonb_build_object('app_type', c.client_type)))`;

export const clientSpecs = defineVersionedRecord({
  name: 'client',
  // The columns of the clients table (is_default is no attribute, the secret's ciphertext never read here).
  attributes: clientsTable.attributes<VersionedAttribute>({
    client_type: { only: 'v1' },
    // Sorted case-insensitively: the unique index ux_clients_name (instance_id, tenant_id, lower(client_name)) serves it.
    client_name: { sortColumn: 'lower(c.client_name)' },
    client_metadata: { v2Column: CLIENT_MD_V2, opaque: false },
  }),
  children: CLIENT_CHILDREN,
  extraFields: [{ name: 'client_secret' }, { name: 'aggregations', v2Name: 'aggregates' }, { name: 'links' }],
});
