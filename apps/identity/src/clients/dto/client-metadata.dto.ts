import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  MaxLength,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { IsSmallObject, NullableIfPresent } from '../../common/validation.js';

/** Grant types a client may be allowed (document 1's list). The token server serves those it implements. */
export const GRANT_TYPES = [
  'password',
  'refresh_token',
  'authorization_code',
  'authorization_code_verifier',
  'client_credentials',
  'implicit',
  'device_code',
  'otp',
  'token_exchange',
] as const;

/** Client types: native app, single-page app, regular web app, machine-to-machine (the default client's). */
export const CLIENT_TYPES = ['native', 'spa', 'regular_web', 'non_interactive'] as const;

const ONE_YEAR = 365 * 24 * 3600;

export class RefreshTokenSettingsDto {
  @ApiPropertyOptional({ description: 'Refresh tokens expire (after expiration_lifetime seconds)' })
  @NullableIfPresent()
  @IsBoolean()
  expiration_enabled?: boolean;

  @ApiPropertyOptional({ minimum: 1, maximum: ONE_YEAR, example: 2592000 })
  @NullableIfPresent()
  @IsInt()
  @Min(1)
  @Max(ONE_YEAR)
  expiration_lifetime?: number;
}

export class IdTokenSettingsDto {
  @ApiPropertyOptional({ minimum: 1, maximum: ONE_YEAR, example: 36000 })
  @NullableIfPresent()
  @IsInt()
  @Min(1)
  @Max(ONE_YEAR)
  expiration_lifetime?: number;
}

class GrantTypesHolder {
  @ApiPropertyOptional({ type: [String], enum: GRANT_TYPES, example: ['client_credentials'] })
  @NullableIfPresent()
  @IsArray()
  @ArrayMaxSize(GRANT_TYPES.length)
  @IsIn(GRANT_TYPES, { each: true })
  grant_types?: string[];

  @ApiPropertyOptional({ type: () => RefreshTokenSettingsDto })
  @NullableIfPresent()
  @ValidateNested()
  @Type(() => RefreshTokenSettingsDto)
  refresh_token?: RefreshTokenSettingsDto;
}

/**
 * Document 1's common client metadata. On modify, the given keys replace the stored ones and a key set to null is
 * removed; keys not given are kept.
 */
export class ClientMetadataV1Dto extends GrantTypesHolder {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'URLs of the browser flows, as the token server reads them: `callbacks` (the redirect URIs of /authorize, ' +
      'matched exactly; needed by authorization_code and implicit) and `logout_urls` (the post_logout_redirect_uri ' +
      "values of /session/end). Both are arrays of URLs checked by the token server's own rules at create and modify " +
      '(400 naming the field): http(s) only for web clients, https and not localhost with implicit, no fragments; a ' +
      'native client (client_type native) may use a custom scheme or http on a loopback address (RFC 8252). ' +
      '`redirect_uris` and `post_logout_redirect_uris` are refused (the token server does not read them); other keys ' +
      'are kept as given.',
    example: {
      callbacks: ['https://app.example.com/callback'],
      logout_urls: ['https://app.example.com/signed-out'],
    },
  })
  @NullableIfPresent()
  @IsSmallObject()
  urls?: Record<string, unknown>;

  @ApiPropertyOptional({ type: () => IdTokenSettingsDto })
  @NullableIfPresent()
  @ValidateNested()
  @Type(() => IdTokenSettingsDto)
  id_token?: IdTokenSettingsDto;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @NullableIfPresent()
  @IsSmallObject()
  oauth?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @NullableIfPresent()
  @IsSmallObject()
  saml?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @NullableIfPresent()
  @IsSmallObject()
  wsfed?: Record<string, unknown>;
}

export class MobileIosDto {
  @ApiPropertyOptional({ example: 'ABCDE12345' })
  @NullableIfPresent()
  @IsString()
  @MaxLength(255)
  team_id?: string;

  @ApiPropertyOptional({ example: 'com.example.app' })
  @NullableIfPresent()
  @IsString()
  @MaxLength(255)
  app_id?: string;
}

export class MobileAndroidDto {
  @ApiPropertyOptional({ example: 'com.example.app' })
  @NullableIfPresent()
  @IsString()
  @MaxLength(255)
  package_name?: string;

  @ApiPropertyOptional({ type: [String] })
  @NullableIfPresent()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(255, { each: true })
  hash_keys?: string[];
}

export class MobileDto {
  @ApiPropertyOptional({ type: () => MobileIosDto })
  @NullableIfPresent()
  @ValidateNested()
  @Type(() => MobileIosDto)
  ios?: MobileIosDto;

  @ApiPropertyOptional({ type: () => MobileAndroidDto })
  @NullableIfPresent()
  @ValidateNested()
  @Type(() => MobileAndroidDto)
  android?: MobileAndroidDto;
}

/** Document 2's client metadata: `app_type` is the client type. */
export class ClientMetadataV2Dto extends GrantTypesHolder {
  @ApiPropertyOptional({ enum: CLIENT_TYPES, example: 'spa' })
  @NullableIfPresent()
  @IsIn(CLIENT_TYPES)
  app_type?: string | null;

  @ApiPropertyOptional({ type: () => MobileDto })
  @NullableIfPresent()
  @ValidateNested()
  @Type(() => MobileDto)
  mobile?: MobileDto;
}
