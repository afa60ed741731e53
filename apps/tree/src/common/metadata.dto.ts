import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** OpenAPI shapes of `metadata` (validated by IsTreeMetadata, which refuses any other key). */
export class MetadataLabelDoc {
  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true })
  label_id?: string | null;
}

export class MetadataFieldDoc {
  @ApiProperty({ example: 'cost_center' })
  name: string;

  @ApiProperty({ oneOf: [{ type: 'number' }, { type: 'string' }], example: 4100 })
  value: number | string;
}

export class VersionMetadataDoc {
  @ApiPropertyOptional({ type: () => MetadataLabelDoc, nullable: true })
  label?: MetadataLabelDoc | null;

  @ApiPropertyOptional({ type: [String], example: ['finance'] })
  tags?: string[];
}

export class TreeMetadataDoc extends VersionMetadataDoc {
  @ApiPropertyOptional({ type: () => [MetadataFieldDoc] })
  fields?: MetadataFieldDoc[];
}
