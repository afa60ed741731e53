import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsString,
  Matches,
  MaxLength,
  registerDecorator,
  ValidateNested,
} from 'class-validator';
import {
  knownPasswordRuleProblem,
  passwordRuleProblem,
  type AppMetadataEntry,
  type MfaPolicy,
} from '@gatehouse/identity-data';
import { AppMetadata, MfaPolicyField, NotNullIfPresent, NullableIfPresent } from '../../common/validation.js';

/** A BCP 47-like language tag: `en`, `mn-MN`, `en_US`, `zh-Hant-TW`. */
export const LOCALE_TAG = /^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$/;

/**
 * A password rule's `rules`: a regular expression that compiles and is free of catastrophic backtracking (analysed
 * out of the event loop; the validation pipe awaits it).
 */
function IsSafePasswordRule() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isSafePasswordRule',
      target: object.constructor,
      propertyName,
      async: true,
      validator: {
        validate: async (value: unknown) =>
          typeof value !== 'string' || (await passwordRuleProblem(value)) === undefined,
        defaultMessage: (args) =>
          `${args?.property ?? 'rules'} is refused: ${knownPasswordRuleProblem(String(args?.value)) ?? 'invalid'}`,
      },
    });
}

/** One password rule of document 2's `password_validators`. */
export class PasswordValidatorDto {
  @ApiProperty({ example: 1, description: 'Rules are checked and reported in this order' })
  @IsInt()
  order: number;

  @ApiProperty({ example: 'min_length', maxLength: 100 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  validator: string;

  @ApiProperty({ example: 'At least 8 characters', maxLength: 500, description: 'Shown to whoever fails it' })
  @IsString()
  @MaxLength(500)
  description: string;

  @ApiProperty({
    example: '^[\\s\\S]{8,}$',
    maxLength: 1000,
    description:
      'A regular expression (JavaScript, `u` flag) the password must match. It must compile and must not ' +
      'backtrack catastrophically: the ReDoS analysis (recheck) must find it linear or at most quadratic; ' +
      'exponential or higher polynomial backtracking is 400 and nothing is stored.',
  })
  @IsString()
  @IsNotEmpty()
  @IsSafePasswordRule()
  rules: string;
}

/** One entry of document 2's `identity_providers`. */
export class InstanceIdentityProviderDto {
  @ApiProperty({ example: 'google', maxLength: 100 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  identity_provider: string;

  @ApiProperty({ example: true })
  @IsBoolean()
  enabled: boolean;
}

/**
 * Document 2's `instance_metadata`. Each list given replaces that list as a whole; a list not given keeps its value.
 */
export class InstanceMetadataDto {
  @ApiPropertyOptional({
    type: [InstanceIdentityProviderDto],
    maxItems: 50,
    description:
      'Which identity providers may sign users in (token exchange honours `enabled`); unique names',
  })
  @NotNullIfPresent()
  @IsArray()
  @ArrayMaxSize(50)
  @ArrayUnique((p: InstanceIdentityProviderDto) => p?.identity_provider, {
    message: 'identity_providers must name each identity_provider once',
  })
  @ValidateNested({ each: true })
  @Type(() => InstanceIdentityProviderDto)
  identity_providers?: InstanceIdentityProviderDto[];

  @ApiPropertyOptional({
    type: [String],
    example: ['en', 'mn-MN'],
    maxItems: 100,
    description:
      'BCP 47 language tags (`en`, `mn-MN`, `en_US`). The sign-in pages of the instance speak only these (of ' +
      'the languages they have: en, mn): the first of ui_locales, then Accept-Language, that is supported, else ' +
      'the first supported one; none the pages have: every page language',
  })
  @NotNullIfPresent()
  @IsArray()
  @ArrayMaxSize(100)
  @ArrayUnique()
  @IsString({ each: true })
  @Matches(LOCALE_TAG, {
    each: true,
    message: 'supported_locales must hold BCP 47 language tags such as en or mn-MN',
  })
  supported_locales?: string[];

  @ApiPropertyOptional({
    type: [PasswordValidatorDto],
    maxItems: 20,
    description:
      'Every password set (user create, PUT /users/:id/password, sign-up, tickets) must match every rule; ' +
      'an empty list means no rule',
  })
  @NotNullIfPresent()
  @IsArray()
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => PasswordValidatorDto)
  password_validators?: PasswordValidatorDto[];
}

/** Create an instance. */
export class CreateInstanceDto {
  @ApiProperty({ example: 'acme', maxLength: 255, description: 'Unique among instances (any case)' })
  @IsString()
  @Matches(/\S/, { message: 'instance_name must not be empty' })
  @MaxLength(255)
  instance_name: string;

  @ApiPropertyOptional({ type: String, example: 'ACME production', nullable: true, maxLength: 2000 })
  @NullableIfPresent()
  @IsString()
  @MaxLength(2000)
  instance_description?: string | null;

  @ApiPropertyOptional({
    type: () => InstanceMetadataDto,
    description:
      'Lists not given get the defaults: the 8-character rule, `en` and `mn`, no identity provider',
  })
  @NotNullIfPresent()
  @IsObject()
  @ValidateNested()
  @Type(() => InstanceMetadataDto)
  instance_metadata?: InstanceMetadataDto;

  @AppMetadata()
  app_metadata?: AppMetadataEntry[];

  @MfaPolicyField()
  mfa?: MfaPolicy | null;
}

/** Modify an instance: every field optional; the lists of instance_metadata given replace those lists. */
export class UpdateInstanceDto {
  @ApiPropertyOptional({ example: 'acme', maxLength: 255 })
  @NotNullIfPresent()
  @IsString()
  @Matches(/\S/, { message: 'instance_name must not be empty' })
  @MaxLength(255)
  instance_name?: string;

  @ApiPropertyOptional({ type: String, example: 'ACME production', nullable: true, maxLength: 2000 })
  @NullableIfPresent()
  @IsString()
  @MaxLength(2000)
  instance_description?: string | null;

  @ApiPropertyOptional({ type: () => InstanceMetadataDto })
  @NotNullIfPresent()
  @IsObject()
  @ValidateNested()
  @Type(() => InstanceMetadataDto)
  instance_metadata?: InstanceMetadataDto;

  @AppMetadata()
  app_metadata?: AppMetadataEntry[];

  @MfaPolicyField()
  mfa?: MfaPolicy | null;
}
