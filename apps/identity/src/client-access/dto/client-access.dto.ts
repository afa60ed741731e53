import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsUUID, ValidateNested } from 'class-validator';
import { NotNullIfPresent } from '../../common/validation.js';

const MAX_ITEMS = 100;

/** `{"resources": [uuid]}`: authorize or revoke resources of a client. */
export class ResourceIdsDto {
  @ApiProperty({ type: [String], format: 'uuid', minItems: 1, maxItems: MAX_ITEMS })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_ITEMS)
  @IsUUID('all', { each: true })
  resources: string[];
}

/** `{"clients": [uuid]}`: authorize or revoke clients of a resource. */
export class ClientIdsDto {
  @ApiProperty({ type: [String], format: 'uuid', minItems: 1, maxItems: MAX_ITEMS })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_ITEMS)
  @IsUUID('all', { each: true })
  clients: string[];
}

export class PermissionEntryV1Dto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all')
  resource_id: string;

  @ApiProperty({
    type: [String],
    format: 'uuid',
    minItems: 1,
    maxItems: MAX_ITEMS,
    description: 'Scope ids of the resource',
  })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_ITEMS)
  @IsUUID('all', { each: true })
  scopes: string[];
}

/** Document 2 names only `scopes`; the resource of each scope is known, so `resource_id` is optional. */
export class PermissionEntryV2Dto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'When given, every scope must belong to this resource',
  })
  @NotNullIfPresent()
  @IsUUID('all')
  resource_id?: string;

  @ApiProperty({ type: [String], format: 'uuid', minItems: 1, maxItems: MAX_ITEMS })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_ITEMS)
  @IsUUID('all', { each: true })
  scopes: string[];
}

/** Document 1: `{"permissions": [{"resource_id", "scopes": [uuid]}]}`. */
export class PermissionsV1Dto {
  @ApiProperty({ type: [PermissionEntryV1Dto], minItems: 1, maxItems: MAX_ITEMS })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_ITEMS)
  @ValidateNested({ each: true })
  @Type(() => PermissionEntryV1Dto)
  permissions: PermissionEntryV1Dto[];
}

/** Document 2: `{"permissions": [{"scopes": [uuid]}]}`. */
export class PermissionsV2Dto {
  @ApiProperty({ type: [PermissionEntryV2Dto], minItems: 1, maxItems: MAX_ITEMS })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_ITEMS)
  @ValidateNested({ each: true })
  @Type(() => PermissionEntryV2Dto)
  permissions: PermissionEntryV2Dto[];
}
