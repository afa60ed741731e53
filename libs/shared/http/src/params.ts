import { applyDecorators, Param, type PipeTransform } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { invalidRequest } from '@gatehouse/errors';
import { isUuid } from '@gatehouse/query';

class UuidParamPipe implements PipeTransform<string, string> {
  constructor(
    private readonly name: string,
    private readonly message: string,
  ) {}

  transform(value: string): string {
    if (!isUuid(value)) {
      throw invalidRequest(this.message, [{ field: this.name, message: 'must be a UUID' }]);
    }
    return value.toLowerCase();
  }
}

/**
 * A uuid path parameter (lower-cased); a malformed one is 400 `invalid_request` naming it, with `message` (each
 * API keeps the text its clients know: identity's default, tree's `<name> must be a UUID`).
 */
export const UuidParam = (name: string, message = `Path parameter ${name} must be a UUID`) =>
  Param(name, new UuidParamPipe(name, message));

/** OpenAPI description of uuid path parameters. */
export const ApiUuidParams = (...names: string[]) =>
  applyDecorators(
    ...names.map((name) => ApiParam({ name, schema: { type: 'string', format: 'uuid' }, required: true })),
  );
