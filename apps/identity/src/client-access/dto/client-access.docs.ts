import { ApiProperty } from '@nestjs/swagger';
import { ResourceSummaryV1Doc, ResourceSummaryV2Doc } from '../../resources/dto/resource.docs.js';
import { AuditDoc } from '@gatehouse/http';

/** OpenAPI shapes of authorizations and permissions (answers). */
class ClientResourceBaseDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  client_id: string;

  @ApiProperty({ format: 'uuid' })
  resource_id: string;
}

export class ClientResourceV1Doc extends ClientResourceBaseDoc {
  @ApiProperty({ type: () => ResourceSummaryV1Doc })
  resource_data: ResourceSummaryV1Doc;
}

export class ClientResourceV2Doc extends ClientResourceBaseDoc {
  @ApiProperty({ type: () => ResourceSummaryV2Doc })
  resource_data: ResourceSummaryV2Doc;
}

export class ScopeDataDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  resource_id: string;

  @ApiProperty({ example: 'orders:read' })
  scope_name: string;

  @ApiProperty({ type: String, nullable: true })
  scope_description: string | null;
}

/** Document 2's permission record. */
export class ClientPermissionV2Doc extends AuditDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  client_id: string;

  @ApiProperty({ format: 'uuid' })
  resource_id: string;

  @ApiProperty({ format: 'uuid' })
  scope_id: string;
}

/** Document 1's Client Permission. */
export class ClientPermissionV1Doc extends ClientPermissionV2Doc {
  @ApiProperty({ type: () => ResourceSummaryV1Doc })
  resource_data: ResourceSummaryV1Doc;

  @ApiProperty({ type: () => ScopeDataDoc })
  scope_data: ScopeDataDoc;
}
