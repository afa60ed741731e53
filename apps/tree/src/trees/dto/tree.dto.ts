import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, ValidateIf } from 'class-validator';
import { IsTreeMetadata } from '../../common/metadata.js';
import { TreeMetadataDoc } from '../../common/metadata.dto.js';
import { IsDescription, IsName, IsPathCode } from '../../common/validators.js';

const METADATA = { type: () => TreeMetadataDoc, nullable: true };

export class CreateTreeDto {
  @ApiProperty({ description: 'Unique; used in paths as tree_code (no "/")', example: 'chart-of-accounts' })
  @IsPathCode()
  code: string;

  @ApiProperty({ example: 'Chart of accounts' })
  @IsName()
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsDescription()
  description?: string | null;

  @ApiPropertyOptional(METADATA)
  @IsOptional()
  @IsTreeMetadata({ fields: true })
  metadata?: Record<string, unknown> | null;
}

export class UpdateTreeDto {
  @ApiPropertyOptional()
  @ValidateIf((o: UpdateTreeDto) => o.name !== undefined)
  @IsName()
  name?: string;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsDescription()
  description?: string | null;

  @ApiPropertyOptional(METADATA)
  @IsOptional()
  @IsTreeMetadata({ fields: true })
  metadata?: Record<string, unknown> | null;

  @ApiPropertyOptional()
  @ValidateIf((o: UpdateTreeDto) => o.enabled !== undefined)
  @IsBoolean()
  enabled?: boolean;
}

/** Clone Tree: the copy's code and name; description and metadata default to the original's. */
export class CloneTreeDto extends CreateTreeDto {}

export class ChangeTreeCodeDto {
  @ApiProperty({ example: 'coa-2027' })
  @IsPathCode()
  new_code: string;
}
