import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import type { AppMetadataEntry } from '@gatehouse/identity-data';
import { AppMetadata, NotNullIfPresent, NullableIfPresent } from '../../common/validation.js';

/** Access-token signing: RS256 and ES256 with the token server's keys, HS256 with the resource's own secret. */
export const SIGNING_ALGORITHMS = ['RS256', 'ES256', 'HS256'] as const;
export const MAX_TOKEN_LIFETIME = 30 * 24 * 3600;

const identifierUrl = () =>
  [
    NullableIfPresent(),
    IsString(),
    IsNotEmpty(),
    MaxLength(2048),
    Matches(/^\S+$/, { message: '$property must not contain spaces' }),
  ] as const;
const apply =
  (decorators: readonly PropertyDecorator[]): PropertyDecorator =>
  (t, k) =>
    decorators.forEach((d) => d(t, k));

class SigningSecret {
  @ApiPropertyOptional({
    minLength: 32,
    maxLength: 512,
    description: 'HS256 key (at least 32 characters); generated when an HS256 resource is given none',
  })
  @NotNullIfPresent()
  @IsString()
  @MinLength(32)
  @MaxLength(512)
  signing_secret?: string;
}

/** Document 1's `resource_metadata` as written (`scopes_added` is kept by the server). */
export class ResourceMetadataV1Dto extends SigningSecret {
  @ApiPropertyOptional({ description: 'Only false: system resources are made by the server' })
  @NotNullIfPresent()
  @IsBoolean()
  is_system?: boolean;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'https://api.example.com/orders',
    description: 'The audience of its tokens; unique in the instance',
  })
  @apply(identifierUrl())
  identifier_url?: string | null;

  @ApiPropertyOptional({ enum: SIGNING_ALGORITHMS, default: 'ES256' })
  @NotNullIfPresent()
  @IsIn(SIGNING_ALGORITHMS)
  signing_algorithm?: string;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_TOKEN_LIFETIME,
    default: 86400,
    description: 'Access-token lifetime, seconds',
  })
  @NotNullIfPresent()
  @IsInt()
  @Min(1)
  @Max(MAX_TOKEN_LIFETIME)
  token_lifetime?: number;

  @ApiPropertyOptional({ default: false })
  @NotNullIfPresent()
  @IsBoolean()
  rbac_enabled?: boolean;

  @ApiPropertyOptional({ default: true })
  @NotNullIfPresent()
  @IsBoolean()
  skip_consent_for_first_party?: boolean;
}

export class ResourceApiMetadataV2Dto {
  @ApiPropertyOptional({ type: String, nullable: true, example: 'https://api.example.com/orders' })
  @apply(identifierUrl())
  identifier_url?: string | null;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_TOKEN_LIFETIME,
    description: 'Access-token lifetime, seconds',
  })
  @NotNullIfPresent()
  @IsInt()
  @Min(1)
  @Max(MAX_TOKEN_LIFETIME)
  expiration_lifetime?: number;

  @ApiPropertyOptional({ description: 'Only false: system resources are made by the server' })
  @NotNullIfPresent()
  @IsBoolean()
  is_system?: boolean;
}

export class ResourceTokenMetadataV2Dto extends SigningSecret {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_TOKEN_LIFETIME,
    description: 'Access-token lifetime, seconds',
  })
  @NotNullIfPresent()
  @IsInt()
  @Min(1)
  @Max(MAX_TOKEN_LIFETIME)
  expiration_lifetime?: number;

  @ApiPropertyOptional({ enum: SIGNING_ALGORITHMS, default: 'ES256' })
  @NotNullIfPresent()
  @IsIn(SIGNING_ALGORITHMS)
  signing_algorithm?: string;
}

/** Document 2's `resource_metadata`. `api.expiration_lifetime` and `token.expiration_lifetime` are one value. */
export class ResourceMetadataV2Dto {
  @ApiPropertyOptional({ type: () => ResourceApiMetadataV2Dto })
  @NotNullIfPresent()
  @ValidateNested()
  @Type(() => ResourceApiMetadataV2Dto)
  api?: ResourceApiMetadataV2Dto;

  @ApiPropertyOptional({ type: () => ResourceTokenMetadataV2Dto })
  @NotNullIfPresent()
  @ValidateNested()
  @Type(() => ResourceTokenMetadataV2Dto)
  token?: ResourceTokenMetadataV2Dto;

  @ApiPropertyOptional({ default: true })
  @NotNullIfPresent()
  @IsBoolean()
  skip_consent_for_first_party?: boolean;
}

class ResourceNames {
  @ApiProperty({ example: 'Orders API', maxLength: 255 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  resource_name: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000 })
  @NullableIfPresent()
  @IsString()
  @MaxLength(2000)
  resource_description?: string | null;

  @AppMetadata()
  app_metadata?: AppMetadataEntry[];
}

class CreateResourceBase extends ResourceNames {
  @ApiProperty({
    example: 'api',
    maxLength: 64,
    description: 'Kind of resource: api, web, platform, device, database...',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  resource_type: string;
}

export class CreateResourceV1Dto extends CreateResourceBase {
  @ApiPropertyOptional({ type: () => ResourceMetadataV1Dto })
  @NotNullIfPresent()
  @ValidateNested()
  @Type(() => ResourceMetadataV1Dto)
  resource_metadata?: ResourceMetadataV1Dto;
}

export class CreateResourceV2Dto extends CreateResourceBase {
  @ApiPropertyOptional({ type: () => ResourceMetadataV2Dto })
  @NotNullIfPresent()
  @ValidateNested()
  @Type(() => ResourceMetadataV2Dto)
  resource_metadata?: ResourceMetadataV2Dto;
}

/** Document 1: Modify a resource (resource_name, resource_description, resource_metadata, app_metadata). */
export class UpdateResourceV1Dto extends ResourceNames {
  @ApiPropertyOptional({ example: 'Orders API', maxLength: 255 })
  @NotNullIfPresent()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  declare resource_name: string;

  @ApiPropertyOptional({ type: () => ResourceMetadataV1Dto })
  @NotNullIfPresent()
  @ValidateNested()
  @Type(() => ResourceMetadataV1Dto)
  resource_metadata?: ResourceMetadataV1Dto;
}

export class UpdateResourceV2Dto extends ResourceNames {
  @ApiPropertyOptional({ example: 'Orders API', maxLength: 255 })
  @NotNullIfPresent()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  declare resource_name: string;

  @ApiPropertyOptional({ type: () => ResourceMetadataV2Dto })
  @NotNullIfPresent()
  @ValidateNested()
  @Type(() => ResourceMetadataV2Dto)
  resource_metadata?: ResourceMetadataV2Dto;
}
