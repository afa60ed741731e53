import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsEmail, IsNotEmpty, IsString, IsUUID, Matches, MaxLength } from 'class-validator';
import type { AppMetadataEntry } from '@gatehouse/identity-data';
import { AppMetadata, IsSmallObject, NotNullIfPresent, NullableIfPresent } from '../../common/validation.js';

/** Login name: letters, digits, `.`, `_`, `-` (no `@`: it never reads as an e-mail at login). */
export const USER_NAME = /^[\p{L}\p{N}._-]{1,128}$/u;
/** A phone number: `+`, digits and the usual separators; stored as E.164 (`+97699112233`). */
export const PHONE = /^\+[1-9][\d\s\-.()]{3,24}$/;

class UserProfileDto {
  @ApiPropertyOptional({ type: String, example: 'Bat', nullable: true, maxLength: 255 })
  @NullableIfPresent()
  @IsString()
  @MaxLength(255)
  user_nickname?: string | null;

  @ApiPropertyOptional({ type: String, example: 'Bat-Erdene Dorj', nullable: true, maxLength: 255 })
  @NullableIfPresent()
  @IsString()
  @MaxLength(255)
  user_fullName?: string | null;

  @ApiPropertyOptional({ default: false })
  @NotNullIfPresent()
  @IsBoolean()
  user_email_verified?: boolean;

  @ApiPropertyOptional({ default: false })
  @NotNullIfPresent()
  @IsBoolean()
  user_phone_verified?: boolean;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Free-form, at most 16 KiB',
  })
  @NotNullIfPresent()
  @IsSmallObject()
  user_metadata?: Record<string, unknown>;

  @AppMetadata()
  app_metadata?: AppMetadataEntry[];
}

/** Create a user: at least one of user_email, user_name, user_phone. */
export class CreateUserDto extends UserProfileDto {
  @ApiPropertyOptional({
    type: String,
    example: 'bat@example.com',
    nullable: true,
    description: 'Unique in the instance (any case)',
  })
  @NullableIfPresent()
  @IsEmail({}, { message: '$property must be an e-mail address' })
  @MaxLength(320)
  user_email?: string | null;

  @ApiPropertyOptional({
    type: String,
    example: 'bat.dorj',
    nullable: true,
    description: 'Login name, unique in the instance (any case)',
  })
  @NullableIfPresent()
  @IsString()
  @Matches(USER_NAME, { message: '$property must be 1-128 letters, digits, dots, underscores or dashes' })
  user_name?: string | null;

  @ApiPropertyOptional({
    type: String,
    example: '+97699112233',
    nullable: true,
    description: 'E.164; unique in the instance',
  })
  @NullableIfPresent()
  @IsString()
  @Matches(PHONE, { message: '$property must be a phone number in international form (+976...)' })
  user_phone?: string | null;

  @ApiPropertyOptional({ description: "Checked against the instance's password_validators", maxLength: 1024 })
  @NotNullIfPresent()
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  password?: string;

  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'Tenant of the user (a tenant caller: its own)',
  })
  @NullableIfPresent()
  @IsUUID('all')
  tenant_id?: string | null;
}

/** Modify a user (partial). The password changes through PUT /users/:user_id/password. */
export class UpdateUserDto extends UserProfileDto {
  @ApiPropertyOptional({
    type: String,
    example: 'bat@example.com',
    nullable: true,
    description: 'A new e-mail is unverified unless said',
  })
  @NullableIfPresent()
  @IsEmail({}, { message: '$property must be an e-mail address' })
  @MaxLength(320)
  user_email?: string | null;

  @ApiPropertyOptional({ type: String, example: 'bat.dorj', nullable: true })
  @NullableIfPresent()
  @IsString()
  @Matches(USER_NAME, { message: '$property must be 1-128 letters, digits, dots, underscores or dashes' })
  user_name?: string | null;

  @ApiPropertyOptional({
    type: String,
    example: '+97699112233',
    nullable: true,
    description: 'A new phone is unverified unless said',
  })
  @NullableIfPresent()
  @IsString()
  @Matches(PHONE, { message: '$property must be a phone number in international form (+976...)' })
  user_phone?: string | null;
}

/** PUT /users/:user_id/password. */
export class SetPasswordDto {
  @ApiProperty({ maxLength: 1024, description: "Checked against the instance's password_validators" })
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  password: string;
}
