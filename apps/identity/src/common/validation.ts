import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsString,
  MaxLength,
  ValidateIf,
  ValidateNested,
  registerDecorator,
  type ValidationOptions,
} from 'class-validator';

/** Optional, but when present it must not be null (for columns that cannot be empty). */
export const NotNullIfPresent = () => ValidateIf((_o, v) => v !== undefined);

/** Optional and nullable: null clears the value. */
export const NullableIfPresent = () => ValidateIf((_o, v) => v !== undefined && v !== null);

/** One `app_metadata` entry: `{key, value}` strings (document 1, part 2). */
export class AppMetadataEntryDto {
  @ApiProperty({ example: 'cost_center', maxLength: 255 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  key: string;

  @ApiProperty({ example: '4100', maxLength: 4096 })
  @IsString()
  @MaxLength(4096)
  value: string;
}

/** `app_metadata`: an array of at most 100 `{key, value}` string pairs, replaced as a whole. */
export const AppMetadata = () =>
  applyDecorators(
    ApiProperty({ type: [AppMetadataEntryDto], required: false, maxItems: 100 }),
    NotNullIfPresent(),
    IsArray(),
    ArrayMaxSize(100),
    ValidateNested({ each: true }),
    Type(() => AppMetadataEntryDto),
  );

/** The MFA policies a record may set (null: inherit). */
export const MFA_POLICY_VALUES = ['off', 'optional', 'required'] as const;

/** What `mfa` means, in every record that has it (docs/security.md "Second factors"). */
export const MFA_POLICY_DESCRIPTION =
  'MFA policy: `off` (no second factor, even for a user who has one), `optional` (asked of users who enrolled ' +
  'one), `required` (every user; one without an authenticator enrols at the next browser sign-in); null inherits. ' +
  "The effective policy of a sign-in is the client's, else its user's tenant's, else the instance's, else " +
  '`optional`.';

/** `mfa` of an instance, tenant or client: optional, null (inherit) or one of MFA_POLICY_VALUES. */
export const MfaPolicyField = () =>
  applyDecorators(
    ApiProperty({
      enum: MFA_POLICY_VALUES,
      nullable: true,
      required: false,
      example: 'required',
      description: MFA_POLICY_DESCRIPTION,
    }),
    NullableIfPresent(),
    IsIn(MFA_POLICY_VALUES, { message: `mfa must be one of ${MFA_POLICY_VALUES.join(', ')} or null` }),
  );

/** The `mfa` property of a record's documentation. */
export const MfaPolicyDoc = () =>
  ApiProperty({ enum: MFA_POLICY_VALUES, nullable: true, type: String, description: MFA_POLICY_DESCRIPTION });

const MAX_JSON_BYTES = 16 * 1024;

/** A free-form JSON object of at most 16 KiB (`urls`, `oauth`, `user_metadata`, ...). */
export function IsSmallObject(options?: ValidationOptions) {
  return applyDecorators(IsObject(options), (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isSmallObject',
      target: object.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) =>
          value !== null &&
          typeof value === 'object' &&
          !Array.isArray(value) &&
          Buffer.byteLength(JSON.stringify(value)) <= MAX_JSON_BYTES,
        defaultMessage: (args) =>
          `${args?.property ?? 'value'} must be a JSON object of at most ${MAX_JSON_BYTES} bytes`,
      },
    }),
  );
}

/** For unique-violation mapping: the constraint names of a table and the conflict message of each. */
export type ConflictMessages = Record<string, string>;
