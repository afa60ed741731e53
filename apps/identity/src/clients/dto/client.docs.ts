import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { MfaPolicy } from '@gatehouse/identity-data';
import { AppMetadataEntryDto, MfaPolicyDoc } from '../../common/validation.js';
import { AuditDoc } from '@gatehouse/http';
import {
  ClientPermissionV1Doc,
  ClientPermissionV2Doc,
  ClientResourceV1Doc,
  ClientResourceV2Doc,
} from '../../client-access/dto/client-access.docs.js';
import { CLIENT_TYPES, ClientMetadataV1Dto, ClientMetadataV2Dto } from './client-metadata.dto.js';

/** OpenAPI shapes of clients (answers). */
export class ClientAggregationsDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  client_id: string;

  @ApiProperty({ description: 'Number of resources authorized to the client' })
  resources: number;

  @ApiProperty({ description: 'Number of permissions granted to the client' })
  permissions: number;
}

class ClientLinksDoc {
  @ApiProperty({ example: '/api/v1/clients/7d1c.../resources' })
  resources: string;

  @ApiProperty({ example: '/api/v1/clients/7d1c.../permissions' })
  permissions: string;
}

class ClientBaseDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  instance_id: string;

  @ApiProperty({ example: 'Orders web app' })
  client_name: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description:
      'Only on single-record answers (read, create, modify, change secret); null for a public client',
  })
  client_secret?: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  client_secret_expires_at: string | null;

  @ApiProperty({ type: String, nullable: true })
  client_description: string | null;

  @ApiProperty({ type: [AppMetadataEntryDto] })
  app_metadata: AppMetadataEntryDto[];

  @ApiProperty()
  is_first_party: boolean;

  @ApiProperty({ description: 'A public client has no secret' })
  is_public: boolean;

  @ApiProperty({ description: 'A global client reaches every tenant; otherwise only its tenant_id' })
  is_global: boolean;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  tenant_id: string | null;

  @MfaPolicyDoc()
  mfa: MfaPolicy | null;

  @ApiPropertyOptional({ type: () => ClientLinksDoc, description: 'Without expand' })
  links?: ClientLinksDoc;
}

/** Document 1's Client. */
export class ClientV1Doc extends ClientBaseDoc {
  @ApiProperty({ type: String, enum: CLIENT_TYPES, nullable: true })
  client_type: string | null;

  @ApiProperty({ type: () => ClientMetadataV1Dto })
  client_metadata: ClientMetadataV1Dto;

  @ApiPropertyOptional({ type: () => ClientAggregationsDoc })
  aggregations?: ClientAggregationsDoc;

  @ApiPropertyOptional({ type: () => [ClientResourceV1Doc], description: 'With expand=all' })
  resources?: ClientResourceV1Doc[];

  @ApiPropertyOptional({ type: () => [ClientPermissionV1Doc], description: 'With expand=all' })
  permissions?: ClientPermissionV1Doc[];
}

/** Document 2's Client: `aggregates`, and the client type as `client_metadata.app_type`. */
export class ClientV2Doc extends ClientBaseDoc {
  @ApiProperty({ type: () => ClientMetadataV2Dto })
  client_metadata: ClientMetadataV2Dto;

  @ApiPropertyOptional({ type: () => ClientAggregationsDoc })
  aggregates?: ClientAggregationsDoc;

  @ApiPropertyOptional({ type: () => [ClientResourceV2Doc], description: 'With expand=all' })
  resources?: ClientResourceV2Doc[];

  @ApiPropertyOptional({ type: () => [ClientPermissionV2Doc], description: 'With expand=all' })
  permissions?: ClientPermissionV2Doc[];
}
