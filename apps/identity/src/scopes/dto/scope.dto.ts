import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';
import { NotNullIfPresent, NullableIfPresent } from '../../common/validation.js';

/** RFC 6749 scope-token: printable ASCII without space, `"` and `\` (scopes travel space-separated in tokens). */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const SCOPE_MESSAGE = '$property must be printable ASCII without spaces, quotes or backslashes';

export class CreateScopeDto {
  @ApiProperty({ example: 'orders:read', maxLength: 255, description: 'Unique within the resource' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  @Matches(SCOPE_TOKEN, { message: SCOPE_MESSAGE })
  scope_name: string;

  @ApiPropertyOptional({ type: String, example: 'Read orders', nullable: true, maxLength: 2000 })
  @NullableIfPresent()
  @IsString()
  @MaxLength(2000)
  scope_description?: string | null;
}

export class UpdateScopeDto extends CreateScopeDto {
  @ApiPropertyOptional({ example: 'orders:read', maxLength: 255 })
  @NotNullIfPresent()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  @Matches(SCOPE_TOKEN, { message: SCOPE_MESSAGE })
  declare scope_name: string;
}
