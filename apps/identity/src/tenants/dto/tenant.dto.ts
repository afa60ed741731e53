import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import type { AppMetadataEntry, MfaPolicy } from '@gatehouse/identity-data';
import { AuditDoc } from '@gatehouse/http';
import {
  AppMetadata,
  AppMetadataEntryDto,
  MfaPolicyDoc,
  MfaPolicyField,
  NotNullIfPresent,
  NullableIfPresent,
} from '../../common/validation.js';
import { UserV1Doc, UserV2Doc } from '../../users/dto/user.docs.js';

/** Body of Create a tenant. */
export class CreateTenantDto {
  @ApiProperty({ example: 'acme', maxLength: 255, description: 'Unique in the instance (any case)' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  tenant_name: string;

  @ApiPropertyOptional({ type: String, example: 'Acme Corporation', nullable: true, maxLength: 2000 })
  @NullableIfPresent()
  @IsString()
  @MaxLength(2000)
  tenant_description?: string | null;

  @AppMetadata()
  app_metadata?: AppMetadataEntry[];

  @MfaPolicyField()
  mfa?: MfaPolicy | null;
}

/** Body of Modify a tenant: every field optional. */
export class UpdateTenantDto {
  @ApiPropertyOptional({ example: 'acme', maxLength: 255 })
  @NotNullIfPresent()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  tenant_name?: string;

  @ApiPropertyOptional({ type: String, example: 'Acme Corporation', nullable: true, maxLength: 2000 })
  @NullableIfPresent()
  @IsString()
  @MaxLength(2000)
  tenant_description?: string | null;

  @AppMetadata()
  app_metadata?: AppMetadataEntry[];

  @MfaPolicyField()
  mfa?: MfaPolicy | null;
}

export class TenantAggregationsDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty({ type: 'integer', description: 'users of the tenant' }) users: number;
  @ApiProperty({ type: 'integer', description: 'clients of the tenant' }) clients: number;
  @ApiProperty({ type: 'integer', description: 'resources of the tenant' }) resources: number;
  @ApiProperty({ type: 'integer', description: 'roles of the tenant' }) roles: number;
  @ApiProperty({ type: 'integer', description: 'groups of the tenant' }) groups: number;
  @ApiProperty({ type: 'integer', description: 'users who administer the tenant' }) admins: number;
}

class TenantLinksDoc {
  @ApiProperty({ example: '/api/v1/tenants/7d3c.../admins' }) admins: string;
}

class TenantBaseDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) instance_id: string;
  @ApiProperty({ example: 'acme' }) tenant_name: string;
  @ApiProperty({ type: String, example: 'Acme Corporation', nullable: true }) tenant_description:
    string | null;
  @ApiProperty({ type: [AppMetadataEntryDto] }) app_metadata: AppMetadataEntry[];
  @MfaPolicyDoc() mfa: MfaPolicy | null;
  @ApiPropertyOptional({ type: TenantLinksDoc, description: 'the child collections, when not expanded' })
  links?: TenantLinksDoc;
}

export class TenantV1Doc extends TenantBaseDoc {
  @ApiPropertyOptional({
    type: TenantAggregationsDoc,
    description: 'when fields names it, or no fields are given',
  })
  aggregations?: TenantAggregationsDoc;

  @ApiPropertyOptional({
    type: [UserV1Doc],
    description: 'with expand=all: the users who administer the tenant',
  })
  admins?: UserV1Doc[];
}

export class TenantV2Doc extends TenantBaseDoc {
  @ApiPropertyOptional({
    type: TenantAggregationsDoc,
    description: 'when fields names it, or no fields are given',
  })
  aggregates?: TenantAggregationsDoc;

  @ApiPropertyOptional({
    type: [UserV2Doc],
    description: 'with expand=all: the users who administer the tenant',
  })
  admins?: UserV2Doc[];
}
