import { Body, type PipeTransform, type Type } from '@nestjs/common';
import { invalidRequest } from '@gatehouse/errors';
import { createValidationPipe } from '@gatehouse/http';

/**
 * Validates a JSON body against `dto` (chosen per presentation, so one handler serves both versions): the shared
 * validation pipe's rules (unknown fields, wrong types and missing fields are 400 naming the field), plus: a body
 * that is not a JSON object is 400, and no body at all counts as `{}` (so required fields are named).
 */
class DtoBodyPipe<T extends object> implements PipeTransform<unknown, Promise<T>> {
  private readonly pipe;

  constructor(private readonly dto: Type<T>) {
    this.pipe = createValidationPipe({ expectedType: dto });
  }

  async transform(value: unknown): Promise<T> {
    const body = value === undefined || value === null ? {} : value;
    if (typeof body !== 'object' || Array.isArray(body)) {
      throw invalidRequest('Request body must be a JSON object', [
        { field: 'body', message: 'must be a JSON object' },
      ]);
    }
    return (await this.pipe.transform(body, { type: 'body', metatype: this.dto })) as T;
  }
}

/** `@ValidBody(CreateClientV1Dto) body: ...`: a body validated against `dto` (document it with `@ApiBody`). */
export const ValidBody = <T extends object>(dto: Type<T>) => Body(new DtoBodyPipe(dto));
