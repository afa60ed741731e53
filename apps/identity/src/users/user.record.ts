import { type Timestamp } from '@gatehouse/db';
import type { AppMetadataEntry } from '@gatehouse/identity-data';
import { auditAttributes, defineVersionedRecord, type VersionedAttribute } from '../common/records.js';
import { linksOf, mapKeys } from '@gatehouse/query';
import { apiBase, type ApiVersion } from '../common/version.js';

import { usersTable, type UserRow } from '@gatehouse/identity-data';

export { USER_COLUMNS, type UserRow } from '@gatehouse/identity-data';

export interface UserAggregations {
  id: string;
  user_id: string;
  last_sign_in_at: Timestamp | null;
  logins: number;
  identities: number;
  permissions: number;
  roles: number;
  /** Live refresh tokens and stored (opaque) access tokens of the user. */
  tokens: number;
  /** Confirmed second factors (an authenticator app, its recovery codes). */
  authenticators: number;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

/** Document 2's `identities` item. Tokens of the identity provider are not kept: null. */
export interface UserIdentityRecord {
  id: string;
  user_id: string;
  identity_provider: string;
  user_identifier: string;
  identity_data: {
    profile_picture: unknown;
    username: unknown;
    user_fullname: unknown;
    email_verified: unknown;
    phone: unknown;
    phone_verified: unknown;
  };
  refresh_token: null;
  access_token: null;
  access_token_secret: null;
  last_sign_in_at: Timestamp | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

/** A link of the user to a role, group or tenant (document 2's `roles`, `groups`, `tenants` items). */
export type UserLinkRecord = Record<string, unknown>;

/**
 * Document 2's User plus `user_email` and `user_name` (docs/contract.md), in both presentations; v1 says `aggregations`,
 * v2 `aggregates`. Password hashes never leave the service.
 */
export interface UserRecord {
  id: string;
  instance_id: string;
  user_email: string | null;
  user_name: string | null;
  user_nickname: string | null;
  user_fullName: string | null;
  user_email_verified: boolean;
  user_phone: string | null;
  user_phone_verified: boolean;
  user_metadata: Record<string, unknown>;
  app_metadata: AppMetadataEntry[];
  is_blocked: boolean;
  is_invited: boolean;
  invited_at: Timestamp | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
  aggregations?: UserAggregations;
  identities?: UserIdentityRecord[];
  roles?: UserLinkRecord[];
  permissions?: UserLinkRecord[];
  groups?: UserLinkRecord[];
  tenants?: UserLinkRecord[];
}

/**
 * The record of a row. Not a copy: document 2 names most fields otherwise (`nickname` is `user_nickname`...), and
 * `tenant_id`, `last_login_at`, `login_count` are the table's internal columns; a column added to the table is a
 * line here too.
 */
export function userRecord(row: UserRow): UserRecord {
  return {
    id: row.id,
    instance_id: row.instance_id,
    user_email: row.user_email,
    user_name: row.user_name,
    user_nickname: row.nickname,
    user_fullName: row.name,
    user_email_verified: row.email_verified,
    user_phone: row.phone_number,
    user_phone_verified: row.phone_verified,
    user_metadata: row.user_metadata ?? {},
    app_metadata: row.app_metadata ?? [],
    is_blocked: row.is_blocked,
    is_invited: row.is_invited,
    invited_at: row.invited_at,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_by: row.updated_by,
    updated_at: row.updated_at,
  };
}

export const USER_CHILDREN = ['identities', 'roles', 'permissions', 'groups', 'tenants'];

export const userSpecs = defineVersionedRecord({
  name: 'user',
  // The record columns of the users table under the record's names (userRecord maps them by hand).
  attributes: usersTable.attributes<VersionedAttribute>({
    // Sorted case-insensitively, as the unique indexes ux_users_email and ux_users_name hold them.
    user_email: { sortColumn: 'lower(u.user_email)' },
    user_name: { sortColumn: 'lower(u.user_name)' },
    nickname: { name: 'user_nickname' },
    name: { name: 'user_fullName' },
    email_verified: { name: 'user_email_verified' },
    phone_number: { name: 'user_phone' },
    phone_verified: { name: 'user_phone_verified' },
  }),
  children: { v1: USER_CHILDREN, v2: USER_CHILDREN },
  extraFields: [{ name: 'aggregations', v2Name: 'aggregates' }, { name: 'links' }],
});

/** An entry of the user's `tenants` (GET /users/:user_id/tenants), the same in both presentations. */
export const userTenantSpecs = defineVersionedRecord({
  name: 'user_tenant',
  attributes: [
    { name: 'id', column: 'l.id', type: 'uuid' },
    { name: 'user_id', column: 'l.user_id', type: 'uuid' },
    { name: 'tenant_id', column: 'l.tenant_id', type: 'uuid' },
    { name: 'is_member', column: 'l.is_member', type: 'boolean' },
    { name: 'is_admin', column: 'l.is_admin', type: 'boolean' },
    ...auditAttributes('l'),
  ],
  children: { v1: [], v2: [] },
});

export function shapeUser(v: ApiVersion) {
  return (rec: UserRecord, expand: boolean): Record<string, unknown> => {
    const base = mapKeys(rec, {
      aggregations: (a: UserAggregations) => [v === 'v1' ? 'aggregations' : 'aggregates', a],
    });
    if (!expand) base.links = linksOf(`${apiBase(v)}/users/${rec.id}`, USER_CHILDREN);
    return base;
  };
}
