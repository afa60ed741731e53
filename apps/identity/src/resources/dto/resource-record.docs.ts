import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { AppMetadataEntryDto } from '../../common/validation.js';
import { ResourceClientV1Doc, ResourceClientV2Doc } from '../../client-access/dto/resource-client.docs.js';
import {
  ResourceAggregationsDoc,
  ResourceLinksDoc,
  ResourceMetadataV1Doc,
  ResourceMetadataV2Doc,
  ScopeDoc,
} from './resource.docs.js';

class ResourceBaseDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  instance_id: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  tenant_id: string | null;

  @ApiProperty({ example: 'api' })
  resource_type: string;

  @ApiProperty({ example: 'Orders API' })
  resource_name: string;

  @ApiProperty({ type: String, nullable: true })
  resource_description: string | null;

  @ApiProperty({ type: [AppMetadataEntryDto] })
  app_metadata: AppMetadataEntryDto[];

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  created_by: string | null;

  @ApiProperty({ format: 'date-time' })
  created_date: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  updated_by: string | null;

  @ApiProperty({ format: 'date-time' })
  updated_date: string;

  @ApiPropertyOptional({ type: () => [ScopeDoc], description: 'With expand=all' })
  scopes?: ScopeDoc[];

  @ApiPropertyOptional({ type: () => ResourceLinksDoc, description: 'Without expand' })
  links?: ResourceLinksDoc;
}

/** Document 1's Resource. */
export class ResourceV1Doc extends ResourceBaseDoc {
  @ApiProperty({ type: () => ResourceMetadataV1Doc })
  resource_metadata: ResourceMetadataV1Doc;

  @ApiPropertyOptional({ type: () => ResourceAggregationsDoc })
  aggregations?: ResourceAggregationsDoc;

  @ApiPropertyOptional({
    type: () => [ResourceClientV1Doc],
    description: 'With expand=all: the clients it is authorized to',
  })
  clients?: ResourceClientV1Doc[];
}

/** Document 2's Resource. */
export class ResourceV2Doc extends ResourceBaseDoc {
  @ApiProperty({ type: () => ResourceMetadataV2Doc })
  resource_metadata: ResourceMetadataV2Doc;

  @ApiPropertyOptional({ type: () => ResourceAggregationsDoc })
  aggregates?: ResourceAggregationsDoc;

  @ApiPropertyOptional({
    type: () => [ResourceClientV2Doc],
    description: 'With expand=all: the clients it is authorized to',
  })
  clients?: ResourceClientV2Doc[];
}
