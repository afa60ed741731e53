import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, ValidateIf } from 'class-validator';
import { IsTreeMetadata } from '../../common/metadata.js';
import { VersionMetadataDoc } from '../../common/metadata.dto.js';
import { IsDescription, IsName, IsPathCode } from '../../common/validators.js';

const METADATA = { type: () => VersionMetadataDoc, nullable: true };

export class CreateVersionDto {
  @ApiPropertyOptional({
    description: 'Version code, unique in the tree; used in paths as tree_version. Absent: the next free vN',
    example: 'v2',
  })
  @IsOptional()
  @IsPathCode()
  version?: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsName()
  name?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsDescription()
  description?: string | null;

  @ApiPropertyOptional(METADATA)
  @IsOptional()
  @IsTreeMetadata({ fields: false })
  metadata?: Record<string, unknown> | null;
}

export class UpdateVersionDto {
  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsName()
  name?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsDescription()
  description?: string | null;

  @ApiPropertyOptional(METADATA)
  @IsOptional()
  @IsTreeMetadata({ fields: false })
  metadata?: Record<string, unknown> | null;

  @ApiPropertyOptional()
  @ValidateIf((o: UpdateVersionDto) => o.enabled !== undefined)
  @IsBoolean()
  enabled?: boolean;
}

export class CloneVersionDto {
  @ApiProperty({ description: 'Code of the copy, unique in the tree', example: 'v2' })
  @IsPathCode()
  version: string;

  @ApiProperty({ example: 'Budget 2027' })
  @IsName()
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: "Default: the original's" })
  @IsOptional()
  @IsDescription()
  description?: string | null;

  @ApiPropertyOptional({ ...METADATA, description: "Default: the original's" })
  @IsOptional()
  @IsTreeMetadata({ fields: false })
  metadata?: Record<string, unknown> | null;
}

export class ChangeVersionCodeDto {
  @ApiProperty({ example: 'v2026' })
  @IsPathCode()
  new_version: string;
}
