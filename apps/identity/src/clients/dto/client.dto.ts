import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import type { AppMetadataEntry, MfaPolicy } from '@gatehouse/identity-data';
import { AppMetadata, MfaPolicyField, NotNullIfPresent, NullableIfPresent } from '../../common/validation.js';
import { CLIENT_TYPES, ClientMetadataV1Dto, ClientMetadataV2Dto } from './client-metadata.dto.js';

const NAME_MAX = 255;
const DESCRIPTION_MAX = 2000;

/** Longest client_secret_lifetime: 100 years (a secret that never expires: leave both fields out, or null). */
export const SECRET_LIFETIME_MAX = 100 * 365 * 24 * 3600;

/**
 * When the client secret stops working: an instant (`client_secret_expires_at`, as the record shows it) or a
 * lifetime from now in seconds (`client_secret_lifetime`, Keycloak's "secret expiration"); not both. Create, modify
 * (the current secret) and change secret take it.
 */
export class SecretExpiryDto {
  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2099-01-01T00:00:00Z',
    description:
      'When the secret stops working (ISO 8601 with a time zone; must be in the future). null: never. ' +
      'From then on every endpoint that checks the secret answers 401 invalid_client.',
  })
  @NullableIfPresent()
  @IsString()
  @IsISO8601({ strict: true, strictSeparator: true })
  client_secret_expires_at?: string | null;

  @ApiPropertyOptional({
    type: Number,
    minimum: 1,
    maximum: SECRET_LIFETIME_MAX,
    description:
      'The same as a lifetime: the secret expires this many seconds from now (not with client_secret_expires_at)',
  })
  @NotNullIfPresent()
  @IsInt()
  @Min(1)
  @Max(SECRET_LIFETIME_MAX)
  client_secret_lifetime?: number;
}

class ClientNameAndDescription extends SecretExpiryDto {
  @ApiProperty({ example: 'Orders web app', maxLength: NAME_MAX, description: 'Unique within its tenant' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(NAME_MAX)
  client_name: string;

  @ApiPropertyOptional({
    type: String,
    example: 'The storefront',
    maxLength: DESCRIPTION_MAX,
    nullable: true,
  })
  @NullableIfPresent()
  @IsString()
  @MaxLength(DESCRIPTION_MAX)
  client_description?: string | null;

  @AppMetadata()
  app_metadata?: AppMetadataEntry[];
}

/** The reach and kind of a client, in both presentations. */
class ClientFlags extends ClientNameAndDescription {
  @ApiPropertyOptional({ default: false, description: 'A public client has no secret' })
  @NotNullIfPresent()
  @IsBoolean()
  is_public?: boolean;

  @ApiPropertyOptional({ default: false })
  @NotNullIfPresent()
  @IsBoolean()
  is_first_party?: boolean;

  @ApiPropertyOptional({
    default: true,
    description: 'A global client reaches every tenant; otherwise only the tenant in tenant_id',
  })
  @NotNullIfPresent()
  @IsBoolean()
  is_global?: boolean;

  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true })
  @NullableIfPresent()
  @IsUUID('all')
  tenant_id?: string | null;

  @MfaPolicyField()
  mfa?: MfaPolicy | null;
}

/** Document 1: Create a client. */
export class CreateClientV1Dto extends ClientFlags {
  @ApiPropertyOptional({ type: String, enum: CLIENT_TYPES, example: 'spa', nullable: true })
  @NullableIfPresent()
  @IsIn(CLIENT_TYPES)
  client_type?: string | null;

  @ApiPropertyOptional({
    type: () => ClientMetadataV1Dto,
    description: 'Without grant_types a confidential client is allowed client_credentials',
  })
  @NullableIfPresent()
  @ValidateNested()
  @Type(() => ClientMetadataV1Dto)
  client_metadata?: ClientMetadataV1Dto;
}

/** Document 1: Modify a client (every field optional; `client_metadata` keys merge, null removes one). */
export class UpdateClientV1Dto extends CreateClientV1Dto {
  @ApiPropertyOptional({ example: 'Orders web app', maxLength: NAME_MAX })
  @NotNullIfPresent()
  @IsString()
  @IsNotEmpty()
  @MaxLength(NAME_MAX)
  declare client_name: string;
}

/** Document 2: Create a client; the client type is `client_metadata.app_type`. */
export class CreateClientV2Dto extends ClientFlags {
  @ApiPropertyOptional({
    type: () => ClientMetadataV2Dto,
    description: 'Without grant_types a confidential client is allowed client_credentials',
  })
  @NullableIfPresent()
  @ValidateNested()
  @Type(() => ClientMetadataV2Dto)
  client_metadata?: ClientMetadataV2Dto;
}

/** Document 2: Modify a client (every field optional; `client_metadata` keys merge, null removes one). */
export class UpdateClientV2Dto extends CreateClientV2Dto {
  @ApiPropertyOptional({ example: 'Orders web app', maxLength: NAME_MAX })
  @NotNullIfPresent()
  @IsString()
  @IsNotEmpty()
  @MaxLength(NAME_MAX)
  declare client_name: string;
}
