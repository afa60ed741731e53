import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { AppMetadataEntryDto } from '../../common/validation.js';
import { AuditDoc } from '@gatehouse/http';

/** OpenAPI shapes of users (answers). */
export class UserAggregationsDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  user_id: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_sign_in_at: string | null;

  @ApiProperty({ description: 'Successful logins' })
  logins: number;

  @ApiProperty()
  identities: number;

  @ApiProperty()
  permissions: number;

  @ApiProperty()
  roles: number;

  @ApiProperty({
    description:
      'Confirmed second factors (`GET /users/:user_id/authenticators`): an authenticator app and its recovery codes',
  })
  authenticators: number;

  @ApiProperty({ description: 'Live refresh tokens and stored access tokens' })
  tokens: number;
}

export class IdentityDataDoc {
  @ApiProperty({ type: String, nullable: true }) profile_picture: string | null;
  @ApiProperty({ type: String, nullable: true }) username: string | null;
  @ApiProperty({ type: String, nullable: true }) user_fullname: string | null;
  @ApiProperty({ type: Boolean, nullable: true }) email_verified: boolean | null;
  @ApiProperty({ type: String, nullable: true }) phone: string | null;
  @ApiProperty({ type: Boolean, nullable: true }) phone_verified: boolean | null;
}

export class UserIdentityDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) user_id: string;
  @ApiProperty({ example: 'google' }) identity_provider: string;
  @ApiProperty() user_identifier: string;
  @ApiProperty({ type: () => IdentityDataDoc }) identity_data: IdentityDataDoc;
  @ApiProperty({ type: String, nullable: true, description: 'Not kept: null' }) refresh_token: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Not kept: null' }) access_token: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Not kept: null' }) access_token_secret:
    string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_sign_in_at: string | null;
}

export class UserLinkDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) user_id: string;
}

/** An entry of the user's `roles` (a User Roles link). */
export class UserRoleLinkDoc extends UserLinkDoc {
  @ApiProperty({ format: 'uuid' }) role_id: string;
}

/** An entry of the user's `permissions` (a User Permissions record). */
export class UserPermissionLinkDoc extends UserLinkDoc {
  @ApiProperty({ format: 'uuid' }) resource_id: string;
  @ApiProperty({ format: 'uuid' }) scope_id: string;
}

/** An entry of the user's `groups` (a User Groups link). */
export class UserGroupLinkDoc extends UserLinkDoc {
  @ApiProperty({ format: 'uuid' }) group_id: string;
}

/**
 * An entry of the user's `tenants`: its own tenant (is_member) and each tenant it administers (is_admin), one entry
 * per tenant. `id` is the tenant's id (membership is a column of the user, not a row of its own); the audit fields
 * are the user's for its own tenant, the admin link's otherwise.
 */
export class UserTenantDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid', description: "the tenant's id" }) id: string;
  @ApiProperty({ format: 'uuid' }) user_id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty({ description: "the user's own tenant" }) is_member: boolean;
  @ApiProperty({ description: 'the user administers the tenant (Tenant Admins)' }) is_admin: boolean;
}

class UserLinksDoc {
  @ApiProperty() identities: string;
  @ApiProperty() roles: string;
  @ApiProperty() permissions: string;
  @ApiProperty() groups: string;
  @ApiProperty() tenants: string;
}

class UserBaseDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) instance_id: string;
  @ApiProperty({ type: String, nullable: true, example: 'bat@example.com' }) user_email: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'bat.dorj' }) user_name: string | null;
  @ApiProperty({ type: String, nullable: true }) user_nickname: string | null;
  @ApiProperty({ type: String, nullable: true }) user_fullName: string | null;
  @ApiProperty() user_email_verified: boolean;
  @ApiProperty({ type: String, nullable: true, example: '+97699112233' }) user_phone: string | null;
  @ApiProperty() user_phone_verified: boolean;
  @ApiProperty({ type: 'object', additionalProperties: true }) user_metadata: Record<string, unknown>;
  @ApiProperty({ type: [AppMetadataEntryDto] }) app_metadata: AppMetadataEntryDto[];
  @ApiProperty() is_blocked: boolean;
  @ApiProperty() is_invited: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) invited_at: string | null;
  @ApiPropertyOptional({ type: () => [UserIdentityDoc], description: 'With expand=all' })
  identities?: UserIdentityDoc[];
  @ApiPropertyOptional({
    type: () => [UserRoleLinkDoc],
    description: 'With expand=all: {id, user_id, role_id, ...}',
  })
  roles?: UserRoleLinkDoc[];
  @ApiPropertyOptional({
    type: () => [UserPermissionLinkDoc],
    description: 'With expand=all: {id, user_id, resource_id, scope_id, ...}',
  })
  permissions?: UserPermissionLinkDoc[];
  @ApiPropertyOptional({
    type: () => [UserGroupLinkDoc],
    description: 'With expand=all: {id, user_id, group_id, ...}',
  })
  groups?: UserGroupLinkDoc[];
  @ApiPropertyOptional({
    type: () => [UserTenantDoc],
    description: 'With expand=all: its own tenant and the tenants it administers',
  })
  tenants?: UserTenantDoc[];
  @ApiPropertyOptional({ type: () => UserLinksDoc, description: 'Without expand' }) links?: UserLinksDoc;
}

/** The User (document 2's plus user_email and user_name) under v1. */
export class UserV1Doc extends UserBaseDoc {
  @ApiPropertyOptional({ type: () => UserAggregationsDoc }) aggregations?: UserAggregationsDoc;
}

/** The User under v2. */
export class UserV2Doc extends UserBaseDoc {
  @ApiPropertyOptional({ type: () => UserAggregationsDoc }) aggregates?: UserAggregationsDoc;
}
