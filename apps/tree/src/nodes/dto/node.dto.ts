import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsUUID, ValidateIf } from 'class-validator';
import { IsTreeMetadata } from '../../common/metadata.js';
import { TreeMetadataDoc } from '../../common/metadata.dto.js';
import { IsDescription, IsName, IsNodeCode } from '../../common/validators.js';

const METADATA_SCHEMA = { type: () => TreeMetadataDoc, nullable: true };

export class CreateNodeDto {
  @ApiProperty({ description: 'Unique within the version', example: 'ACC-1000' })
  @IsNodeCode()
  code: string;

  @ApiProperty({ example: 'Assets' })
  @IsName()
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsDescription()
  description?: string | null;

  @ApiPropertyOptional(METADATA_SCHEMA)
  @IsOptional()
  @IsTreeMetadata({ fields: true })
  metadata?: Record<string, unknown> | null;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'Parent node in the same version; absent or null: a root (depth 0)',
  })
  @IsOptional()
  @IsUUID('all')
  parent_id?: string | null;
}

export class UpdateNodeDto {
  @ApiPropertyOptional({ description: 'New code, unique within the version' })
  @ValidateIf((o: UpdateNodeDto) => o.code !== undefined)
  @IsNodeCode()
  code?: string;

  @ApiPropertyOptional()
  @ValidateIf((o: UpdateNodeDto) => o.name !== undefined)
  @IsName()
  name?: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsDescription()
  description?: string | null;

  @ApiPropertyOptional(METADATA_SCHEMA)
  @IsOptional()
  @IsTreeMetadata({ fields: true })
  metadata?: Record<string, unknown> | null;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description:
      'Moves the node with its whole subtree under this parent (null: make it a root). Depths follow. ' +
      'A parent inside the moved subtree is 409; a parent in another version is 400.',
  })
  @IsOptional()
  @IsUUID('all')
  parent_id?: string | null;

  @ApiPropertyOptional()
  @ValidateIf((o: UpdateNodeDto) => o.enabled !== undefined)
  @IsBoolean()
  enabled?: boolean;
}

export class CloneNodeDto {
  @ApiProperty({ description: 'Code of the copy, unique within the version' })
  @IsNodeCode()
  code: string;

  @ApiProperty()
  @IsName()
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: "Default: the original's" })
  @IsOptional()
  @IsDescription()
  description?: string | null;

  @ApiPropertyOptional({ ...METADATA_SCHEMA, description: "Default: the original's" })
  @IsOptional()
  @IsTreeMetadata({ fields: true })
  metadata?: Record<string, unknown> | null;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: "Parent of the copy; absent: the original's parent (a sibling); null: a root",
  })
  @IsOptional()
  @IsUUID('all')
  parent_id?: string | null;
}
