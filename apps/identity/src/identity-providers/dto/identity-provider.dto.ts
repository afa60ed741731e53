import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsNotEmpty,
  IsString,
  Matches,
  MaxLength,
  registerDecorator,
  type ValidationOptions,
} from 'class-validator';
import { NotNullIfPresent, NullableIfPresent } from '../../common/validation.js';
import { AuditDoc } from '@gatehouse/http';

/** A kind of identity provider (document 2's `identity_provider`): `oidc`, `google`, `azure-ad`, ... */
export const PROVIDER_KIND = /^[a-z][a-z0-9_.-]{0,63}$/;
const KIND_MESSAGE =
  '$property must be lower-case letters, digits, ".", "_" or "-", starting with a letter (at most 64)';

/**
 * An http(s) URL without credentials or fragment (its form only). Whether it may be fetched (https, not an internal
 * address, unless OUTBOUND_ALLOWLIST names it) is the outbound policy's decision, applied by the service.
 */
export function isProviderUrl(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > 2000) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username || url.password || url.hash) return false;
  return url.protocol === 'https:' || url.protocol === 'http:';
}

export function IsProviderUrl(options?: ValidationOptions) {
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isProviderUrl',
      target: object.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: isProviderUrl,
        defaultMessage: (args) =>
          `${args?.property ?? 'value'} must be an https URL without credentials or fragment`,
      },
    });
}

export class CreateIdentityProviderDto {
  @ApiProperty({ example: 'google', maxLength: 64, description: 'Kind of provider (`oidc`, `google`, ...)' })
  @IsString()
  @Matches(PROVIDER_KIND, { message: KIND_MESSAGE })
  identity_provider: string;

  @ApiProperty({ example: 'Google Workspace', maxLength: 255 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name: string;

  @ApiProperty({
    example: 'https://accounts.google.com',
    description:
      'The `iss` of its tokens; unique in the tenant. https, not a literal internal address or localhost (unless OUTBOUND_ALLOWLIST names it)',
  })
  @IsString()
  @IsProviderUrl()
  issuer: string;

  @ApiProperty({
    example: '1234.apps.googleusercontent.com',
    maxLength: 500,
    description: 'Our client id there (`aud`)',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  client_id: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 2000,
    writeOnly: true,
    description: 'Sealed at rest; answered once, by the create operation',
  })
  @NullableIfPresent()
  @IsString()
  @IsNotEmpty()
  @MaxLength(2000)
  client_secret?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'https://www.googleapis.com/oauth2/v3/certs',
    description:
      'Its signing keys; null: the jwks_uri of `<issuer>/.well-known/openid-configuration`. https, not a literal internal address or localhost (unless OUTBOUND_ALLOWLIST names it)',
  })
  @NullableIfPresent()
  @IsString()
  @IsProviderUrl()
  jwks_uri?: string | null;

  @ApiPropertyOptional({ default: true })
  @NotNullIfPresent()
  @IsBoolean()
  enabled?: boolean;
}

export class UpdateIdentityProviderDto {
  @ApiPropertyOptional({ example: 'google', maxLength: 64 })
  @NotNullIfPresent()
  @IsString()
  @Matches(PROVIDER_KIND, { message: KIND_MESSAGE })
  identity_provider?: string;

  @ApiPropertyOptional({ example: 'Google Workspace', maxLength: 255 })
  @NotNullIfPresent()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name?: string;

  @ApiPropertyOptional({ example: 'https://accounts.google.com' })
  @NotNullIfPresent()
  @IsString()
  @IsProviderUrl()
  issuer?: string;

  @ApiPropertyOptional({ example: '1234.apps.googleusercontent.com', maxLength: 500 })
  @NotNullIfPresent()
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  client_id?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 2000,
    writeOnly: true,
    description: 'null removes it; never answered',
  })
  @NullableIfPresent()
  @IsString()
  @IsNotEmpty()
  @MaxLength(2000)
  client_secret?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'null: use discovery' })
  @NullableIfPresent()
  @IsString()
  @IsProviderUrl()
  jwks_uri?: string | null;

  @ApiPropertyOptional()
  @NotNullIfPresent()
  @IsBoolean()
  enabled?: boolean;
}

export class IdentityProviderDoc extends AuditDoc {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  instance_id: string;

  @ApiProperty({ format: 'uuid' })
  tenant_id: string;

  @ApiProperty({ example: 'google' })
  identity_provider: string;

  @ApiProperty({ example: 'Google Workspace' })
  name: string;

  @ApiProperty({ example: 'https://accounts.google.com' })
  issuer: string;

  @ApiProperty({ example: '1234.apps.googleusercontent.com' })
  client_id: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Only in the create answer' })
  client_secret?: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'https://www.googleapis.com/oauth2/v3/certs' })
  jwks_uri: string | null;

  @ApiProperty()
  enabled: boolean;
}
