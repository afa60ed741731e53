import { Param, type PipeTransform } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { applyDecorators } from '@nestjs/common';
import { invalidRequest } from '@gatehouse/errors';
import { isUuid } from '@gatehouse/db';

class UuidParamPipe implements PipeTransform<string, string> {
  constructor(private readonly name: string) {}

  transform(value: string): string {
    if (!isUuid(value)) {
      throw invalidRequest(`Path parameter ${this.name} must be a UUID`, [
        { field: this.name, message: 'must be a UUID' },
      ]);
    }
    return value.toLowerCase();
  }
}

/** A uuid path parameter (lower-cased); a malformed one is 400 `invalid_request` naming it. */
export const UuidParam = (name: string) => Param(name, new UuidParamPipe(name));

/** OpenAPI description of uuid path parameters. */
export const ApiUuidParams = (...names: string[]) =>
  applyDecorators(
    ...names.map((name) => ApiParam({ name, schema: { type: 'string', format: 'uuid' }, required: true })),
  );
