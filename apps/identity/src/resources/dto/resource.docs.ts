import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { AppMetadataEntryDto } from '../../common/validation.js';
import { AuditDoc } from '@gatehouse/http';

/** OpenAPI shapes of resources (answers). */
export class ResourceMetadataV1Doc {
  @ApiProperty({ description: 'A system resource (management and tree APIs): it cannot be deleted' })
  is_system: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'https://api.example.com/orders',
    description: 'Token audience',
  })
  identifier_url: string | null;

  @ApiProperty({ enum: ['RS256', 'ES256', 'HS256'], example: 'ES256' })
  signing_algorithm: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'HS256 key; only on single-record answers',
  })
  signing_secret?: string | null;

  @ApiProperty({ example: 3600, description: 'Access-token lifetime in seconds' })
  token_lifetime: number;

  @ApiProperty()
  rbac_enabled: boolean;

  @ApiProperty({ description: 'The resource has scopes' })
  scopes_added: boolean;

  @ApiProperty()
  skip_consent_for_first_party: boolean;
}

export class ResourceApiMetadataV2Doc {
  @ApiProperty({ type: String, nullable: true, example: 'https://api.example.com/orders' })
  identifier_url: string | null;

  @ApiProperty({
    example: 3600,
    description: 'Access-token lifetime in seconds (same value as token.expiration_lifetime)',
  })
  expiration_lifetime: number;

  @ApiProperty()
  is_system: boolean;
}

export class ResourceTokenMetadataV2Doc {
  @ApiProperty({ example: 3600, description: 'Access-token lifetime in seconds' })
  expiration_lifetime: number;

  @ApiProperty({ enum: ['RS256', 'ES256', 'HS256'] })
  signing_algorithm: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'HS256 key; only on single-record answers',
  })
  signing_secret?: string | null;
}

export class ResourceMetadataV2Doc {
  @ApiProperty({ type: () => ResourceApiMetadataV2Doc })
  api: ResourceApiMetadataV2Doc;

  @ApiProperty({ type: () => ResourceTokenMetadataV2Doc })
  token: ResourceTokenMetadataV2Doc;

  @ApiProperty()
  skip_consent_for_first_party: boolean;
}

class ResourceSummaryBase {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'api' })
  resource_type: string;

  @ApiProperty({ example: 'Orders API' })
  resource_name: string;

  @ApiProperty({ type: String, nullable: true })
  resource_description: string | null;

  @ApiProperty({ type: [AppMetadataEntryDto] })
  app_metadata: AppMetadataEntryDto[];

  @ApiProperty({ format: 'date-time' })
  created_date: string;

  @ApiProperty({ format: 'date-time' })
  updated_date: string;
}

/** `resource_data` (v1). */
export class ResourceSummaryV1Doc extends ResourceSummaryBase {
  @ApiProperty({ type: () => ResourceMetadataV1Doc })
  resource_metadata: ResourceMetadataV1Doc;
}

/** `resource_data` (v2). */
export class ResourceSummaryV2Doc extends ResourceSummaryBase {
  @ApiProperty({ type: () => ResourceMetadataV2Doc })
  resource_metadata: ResourceMetadataV2Doc;
}

export class ResourceAggregationsDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  resource_id: string;

  @ApiProperty({ description: 'Number of scopes' })
  scopes: number;

  @ApiProperty({ description: 'Number of clients it is authorized to' })
  clients: number;
}

export class ScopeDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  instance_id: string;

  @ApiProperty({ format: 'uuid' })
  resource_id: string;

  @ApiProperty({ example: 'orders:read' })
  scope_name: string;

  @ApiProperty({ type: String, nullable: true, example: 'Read orders' })
  scope_description: string | null;
}

export class ResourceLinksDoc {
  @ApiProperty({ example: '/api/v1/resources/0b6c.../scopes' })
  scopes: string;

  @ApiProperty({ example: '/api/v1/resources/0b6c.../clients' })
  clients: string;
}
