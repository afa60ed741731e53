import { ValidationPipe, type ArgumentMetadata, type ValidationPipeOptions } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { invalidRequest, type DomainError, type ErrorDetail } from '@gatehouse/errors';

const WHITELIST = 'whitelistValidation';
const UNKNOWN_VALUE = 'unknownValue';

/**
 * Flattens class-validator's error tree into `{field, message}` pairs. `field` is the dotted path
 * (`permissions.0.resource_id`); a message starting with the leaf property name gets the full path instead;
 * a property the DTO does not declare reads `unknown field: <path>`.
 */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  for (const e of errors) {
    const prop = String(e.property ?? '');
    const path = parent && prop ? `${parent}.${prop}` : parent || prop;
    for (const [name, raw] of Object.entries(e.constraints ?? {})) {
      if (name === WHITELIST) {
        out.push({ field: path, message: `unknown field: ${path}` });
      } else if (name === UNKNOWN_VALUE || !path) {
        out.push({ field: path || 'body', message: 'request body must be a JSON object' });
      } else {
        const message =
          prop && raw.startsWith(`${prop} `) ? `${path}${raw.slice(prop.length)}` : `${path}: ${raw}`;
        out.push({ field: path, message });
      }
    }
    if (e.children && e.children.length > 0) out.push(...flattenValidationErrors(e.children, path));
  }
  return out;
}

/** The 400 `invalid_request` for validation errors: message names every field, `details` lists them. */
export function validationException(errors: ValidationError[]): DomainError {
  const details = flattenValidationErrors(errors);
  const message = details.length > 0 ? details.map((d) => d.message).join('; ') : 'Invalid request';
  return invalidRequest(message, details);
}

const PLAIN_TYPES: unknown[] = [String, Boolean, Number, Array, Object, Buffer, Date];

/** A ValidationPipe that answers a JSON array or scalar sent where a DTO object is expected with one clear 400. */
class GatehouseValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const { type, metatype } = metadata;
    const expectsObject =
      type === 'body' && typeof metatype === 'function' && !PLAIN_TYPES.includes(metatype);
    if (
      expectsObject &&
      value !== undefined &&
      value !== null &&
      (Array.isArray(value) || typeof value !== 'object')
    ) {
      throw invalidRequest('Request body must be a JSON object', [
        { field: 'body', message: 'must be a JSON object' },
      ]);
    }
    return super.transform(value, metadata);
  }
}

/**
 * The global ValidationPipe: unknown properties are rejected (whitelist + forbidNonWhitelisted), payloads are
 * transformed into DTO instances, errors are 400 `invalid_request` naming the fields.
 */
export function createValidationPipe(overrides: Partial<ValidationPipeOptions> = {}): ValidationPipe {
  return new GatehouseValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => validationException(errors as ValidationError[]),
    ...overrides,
  });
}
