import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { MfaPolicy } from '@gatehouse/identity-data';
import { AppMetadataEntryDto, MfaPolicyDoc } from '../../common/validation.js';
import { AuditDoc } from '@gatehouse/http';
import { InstanceIdentityProviderDto, PasswordValidatorDto } from './instance.dto.js';

/** OpenAPI shapes of instances (answers). */
export class InstanceMetadataDoc {
  @ApiProperty({ type: [InstanceIdentityProviderDto] })
  identity_providers: InstanceIdentityProviderDto[];

  @ApiProperty({ type: [String], example: ['en'] })
  supported_locales: string[];

  @ApiProperty({ type: [PasswordValidatorDto] })
  password_validators: PasswordValidatorDto[];
}

export class InstanceAggregationsDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) instance_id: string;
  @ApiProperty({ description: 'Clients of the instance' }) clients: number;
  @ApiProperty() tenants: number;
  @ApiProperty({ description: 'Resources of the instance, its two system resources included' })
  resources: number;
  @ApiProperty() users: number;
  @ApiProperty() roles: number;
}

export class DefaultClientDoc {
  @ApiProperty({ format: 'uuid' }) client_id: string;
  @ApiProperty({ description: 'Shown in this answer only, never again' }) client_secret: string;
}

class InstanceDocBase extends AuditDoc {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'acme' }) instance_name: string;
  @ApiProperty({ type: String, nullable: true, example: 'ACME production' }) instance_description:
    string | null;
  @ApiProperty({ description: 'The instance seeded at first start' }) is_default: boolean;
  @ApiProperty({ type: () => InstanceMetadataDoc }) instance_metadata: InstanceMetadataDoc;
  @ApiProperty({ type: [AppMetadataEntryDto] }) app_metadata: AppMetadataEntryDto[];
  @MfaPolicyDoc() mfa: MfaPolicy | null;

  @ApiPropertyOptional({
    type: 'object',
    properties: { admins: { type: 'string' } },
    description: 'the child collections, when not expanded',
  })
  links?: Record<string, string>;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object' },
    description: 'with expand=all: the admins (User records, at most 100)',
  })
  admins?: unknown[];

  @ApiPropertyOptional({
    type: () => DefaultClientDoc,
    description: 'Only in the answer of the create: the new default client credentials, shown once',
  })
  default_client?: DefaultClientDoc;
}

export class InstanceV1Doc extends InstanceDocBase {
  @ApiPropertyOptional({
    type: () => InstanceAggregationsDoc,
    description: 'when fields names it, or no fields are given',
  })
  aggregations?: InstanceAggregationsDoc;
}

export class InstanceV2Doc extends InstanceDocBase {
  @ApiPropertyOptional({
    type: () => InstanceAggregationsDoc,
    description: 'when fields names it, or no fields are given',
  })
  aggregates?: InstanceAggregationsDoc;
}
