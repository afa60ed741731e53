import { ApiProperty } from '@nestjs/swagger';
import { ClientV1Doc, ClientV2Doc } from '../../clients/dto/client.docs.js';

class ResourceClientBaseDoc {
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'Id of the authorization; null when not authorized',
  })
  id: string | null;

  @ApiProperty({ format: 'uuid' })
  resource_id: string;

  @ApiProperty({ format: 'uuid' })
  client_id: string;

  @ApiProperty({ description: 'The resource is authorized to the client' })
  authorized: boolean;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  created_by: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  created_at: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  updated_by: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  updated_at: string | null;
}

/** Document 1's Resource Client (v1 client_data). */
export class ResourceClientV1Doc extends ResourceClientBaseDoc {
  @ApiProperty({ type: () => ClientV1Doc, description: 'The client record without children' })
  client_data: ClientV1Doc;
}

/** The Resource Client with document 2's client record as client_data. */
export class ResourceClientV2Doc extends ResourceClientBaseDoc {
  @ApiProperty({ type: () => ClientV2Doc, description: 'The client record without children' })
  client_data: ClientV2Doc;
}
