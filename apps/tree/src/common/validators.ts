import { applyDecorators } from '@nestjs/common';
import { IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';

/** No control characters (they make codes unprintable and break CSV lines). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const NO_CONTROL_CHARS = /^[^\u0000-\u001f\u007f]*$/;
/** Codes used as path segments: no `/`, no surrounding spaces, no control characters. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const PATH_CODE = /^(?!\s)[^/\u0000-\u001f\u007f]*(?<!\s)$/;

/** A tree code or a version code (appears in paths). */
export function IsPathCode() {
  return applyDecorators(
    IsString(),
    IsNotEmpty(),
    MaxLength(100),
    Matches(PATH_CODE, {
      message: '$property must not contain "/" or control characters, nor start or end with a space',
    }),
  );
}

/** A node code (unique in its version; free text without control characters). */
export function IsNodeCode() {
  return applyDecorators(
    IsString(),
    IsNotEmpty(),
    MaxLength(255),
    Matches(NO_CONTROL_CHARS, { message: '$property must not contain control characters' }),
  );
}

export function IsName() {
  return applyDecorators(IsString(), IsNotEmpty(), MaxLength(255));
}

export function IsDescription() {
  return applyDecorators(IsString(), MaxLength(4000));
}
