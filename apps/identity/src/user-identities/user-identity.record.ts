import { ApiProperty } from '@nestjs/swagger';
import { userIdentitiesTable, type IdentityData, type UserIdentityRow } from '@gatehouse/identity-data';
import { defineVersionedRecord, type VersionedAttribute } from '../common/records.js';
import type { ApiVersion } from '../common/version.js';
import { AuditDoc } from '@gatehouse/http';

/**
 * A user identity as document 2's User.identities gives it: `identity_provider` (the kind of provider),
 * `user_identifier` (the account's `sub` there), `identity_data`, and the provider's `refresh_token`,
 * `access_token`, `access_token_secret`, which are always null: token exchange verifies the provider's token and
 * keeps none of its tokens. Beside them: `instance_id`, `identity_provider_id` (the tenant identity provider that
 * made it; null once deleted) and `issuer`.
 */
export interface UserIdentityRecord {
  id: string;
  instance_id: string;
  user_id: string;
  identity_provider: string;
  identity_provider_id: string | null;
  issuer: string | null;
  user_identifier: string;
  identity_data: IdentityData;
  refresh_token: null;
  access_token: null;
  access_token_secret: null;
  last_sign_in_at: string | null;
  created_by: string | null;
  created_at: string;
  updated_by: string | null;
  updated_at: string;
}

/**
 * The record of a row. Not a copy: document 2 names fields otherwise (`provider` is `identity_provider`), reshapes
 * `profile` into `identity_data` and adds the three null tokens; a column added to the table is a line here too.
 */
export function userIdentityRecord(row: UserIdentityRow): UserIdentityRecord {
  // Written by token exchange in identity_data's names; rows written otherwise may carry OIDC claim names.
  const d = (row.profile ?? {}) as Record<string, unknown>;
  const str = (...v: unknown[]) => (v.find((x) => typeof x === 'string') as string | undefined) ?? null;
  const bool = (...v: unknown[]) => (v.find((x) => typeof x === 'boolean') as boolean | undefined) ?? null;
  return {
    id: row.id,
    instance_id: row.instance_id,
    user_id: row.user_id,
    identity_provider: row.provider,
    identity_provider_id: row.identity_provider_id,
    issuer: row.issuer,
    user_identifier: row.provider_user_id,
    identity_data: {
      profile_picture: str(d.profile_picture, d.picture),
      username: str(d.username, d.preferred_username),
      user_fullname: str(d.user_fullname, d.name),
      email: str(d.email),
      email_verified: bool(d.email_verified),
      phone: str(d.phone, d.phone_number),
      phone_verified: bool(d.phone_verified, d.phone_number_verified),
    },
    refresh_token: null,
    access_token: null,
    access_token_secret: null,
    last_sign_in_at: row.last_sign_in_at,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_by: row.updated_by,
    updated_at: row.updated_at,
  };
}

export const userIdentitySpecs = defineVersionedRecord({
  name: 'user_identity',
  // The columns of the user_identities table under the record's names (userIdentityRecord maps them by hand).
  attributes: userIdentitiesTable.attributes<VersionedAttribute>({
    provider: { name: 'identity_provider' },
    provider_user_id: { name: 'user_identifier' },
    profile: { name: 'identity_data', opaque: false },
  }),
  children: { v1: [], v2: [] },
  extraFields: [{ name: 'refresh_token' }, { name: 'access_token' }, { name: 'access_token_secret' }],
});

/** One shape in both presentations (document 2's; document 1 gives none). */
export const shapeUserIdentity = (_v: ApiVersion) => (r: UserIdentityRecord) =>
  ({ ...r }) as Record<string, unknown>;

export class IdentityDataDoc {
  @ApiProperty({ type: String, nullable: true, example: 'https://img.example/u.png' })
  profile_picture: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'saraa' })
  username: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'Saraa Bold' })
  user_fullname: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'saraa@example.com' })
  email: string | null;

  @ApiProperty({ type: Boolean, nullable: true })
  email_verified: boolean | null;

  @ApiProperty({ type: String, nullable: true })
  phone: string | null;

  @ApiProperty({ type: Boolean, nullable: true })
  phone_verified: boolean | null;
}

export class UserIdentityDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  instance_id: string;

  @ApiProperty({ format: 'uuid' })
  user_id: string;

  @ApiProperty({ example: 'google', description: 'Kind of the identity provider' })
  identity_provider: string;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The tenant identity provider (null once deleted)',
  })
  identity_provider_id: string | null;

  @ApiProperty({ type: String, example: 'https://accounts.google.com', nullable: true })
  issuer: string | null;

  @ApiProperty({ example: '10769150350006150715113082367', description: 'The `sub` of the account there' })
  user_identifier: string;

  @ApiProperty({ type: IdentityDataDoc })
  identity_data: IdentityDataDoc;

  @ApiProperty({ nullable: true, type: 'string', description: 'Always null: upstream tokens are never kept' })
  refresh_token: null;

  @ApiProperty({ nullable: true, type: 'string', description: 'Always null: upstream tokens are never kept' })
  access_token: null;

  @ApiProperty({ nullable: true, type: 'string', description: 'Always null: upstream tokens are never kept' })
  access_token_secret: null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_sign_in_at: string | null;
}
