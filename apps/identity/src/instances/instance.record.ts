import type { Timestamp } from '@gatehouse/db';
import {
  DEFAULT_INSTANCE_SETTINGS,
  type AppMetadataEntry,
  type InstanceRowWithCounts,
  type InstanceSettings,
  type MfaPolicy,
} from '@gatehouse/identity-data';
import { linksOf, mapKeys } from '@gatehouse/query';
import { auditAttributes, defineVersionedRecord } from '../common/records.js';
import { apiBase, type ApiVersion } from '../common/version.js';

export const INSTANCE_CHILDREN = ['admins'];

/** Document 2's `instance_metadata`: the three lists, always present. */
export interface InstanceMetadata {
  identity_providers: NonNullable<InstanceSettings['identity_providers']>;
  supported_locales: string[];
  password_validators: NonNullable<InstanceSettings['password_validators']>;
}

export interface InstanceAggregations {
  id: string;
  instance_id: string;
  clients: number;
  tenants: number;
  resources: number;
  users: number;
  roles: number;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

/**
 * Document 2's Instance, in both presentations (v1 says `aggregations`, v2 `aggregates`), plus `is_default`.
 * `default_client` only in the create answer.
 */
export interface InstanceRecord {
  id: string;
  instance_name: string;
  instance_description: string | null;
  is_default: boolean;
  instance_metadata: InstanceMetadata;
  app_metadata: AppMetadataEntry[];
  mfa: MfaPolicy | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
  aggregations?: InstanceAggregations;
  admins?: Record<string, unknown>[];
  default_client?: { client_id: string; client_secret: string };
}

/** The instance_metadata of stored settings (lists never set read as the defaults' empty lists). */
export function instanceMetadata(settings: InstanceSettings | null | undefined): InstanceMetadata {
  const s = settings ?? {};
  return {
    identity_providers: s.identity_providers ?? [],
    supported_locales: s.supported_locales ?? DEFAULT_INSTANCE_SETTINGS.supported_locales ?? [],
    password_validators: s.password_validators ?? [],
  };
}

export function instanceRecord(row: InstanceRowWithCounts): InstanceRecord {
  const rec: InstanceRecord = {
    id: row.id,
    instance_name: row.name,
    instance_description: row.description,
    is_default: row.is_default,
    instance_metadata: instanceMetadata(row.settings),
    app_metadata: row.app_metadata ?? [],
    mfa: row.mfa ?? null,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_by: row.updated_by,
    updated_at: row.updated_at,
  };
  if (row.agg_clients !== undefined) {
    rec.aggregations = {
      id: row.id,
      instance_id: row.id,
      clients: Number(row.agg_clients ?? 0),
      tenants: Number(row.agg_tenants ?? 0),
      resources: Number(row.agg_resources ?? 0),
      users: Number(row.agg_users ?? 0),
      roles: Number(row.agg_roles ?? 0),
      created_by: row.created_by,
      created_at: row.created_at,
      updated_by: row.updated_by,
      updated_at: row.updated_at,
    };
  }
  return rec;
}

export const instanceSpecs = defineVersionedRecord({
  name: 'instance',
  attributes: [
    { name: 'id', column: 'i.id', type: 'uuid' },
    { name: 'instance_name', column: 'i.name', sortColumn: 'lower(i.name)', type: 'string' },
    { name: 'instance_description', column: 'i.description', type: 'string' },
    { name: 'is_default', column: 'i.is_default', type: 'boolean' },
    { name: 'instance_metadata', column: 'i.settings', type: 'json' },
    { name: 'app_metadata', column: 'i.app_metadata', type: 'json' },
    { name: 'mfa', column: 'i.mfa', type: 'string' },
    ...auditAttributes('i'),
  ],
  children: { v1: INSTANCE_CHILDREN, v2: INSTANCE_CHILDREN },
  extraFields: [{ name: 'aggregations', v2Name: 'aggregates' }, { name: 'links' }],
});

export function shapeInstance(v: ApiVersion) {
  return (rec: InstanceRecord, expand: boolean): Record<string, unknown> => {
    const out = mapKeys(rec, {
      aggregations: (a: InstanceAggregations) => [v === 'v1' ? 'aggregations' : 'aggregates', a],
    });
    if (!expand) out.links = linksOf(`${apiBase(v)}/instances/${rec.id}`, INSTANCE_CHILDREN);
    return out;
  };
}
