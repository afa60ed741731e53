import type { ValidationError } from 'class-validator';
import { flattenValidationErrors, validationException } from './validation.js';

const err = (
  property: string,
  constraints?: Record<string, string>,
  children: ValidationError[] = [],
): ValidationError => ({ property, constraints, children }) as ValidationError;

describe('validation errors', () => {
  it('names each field, unknown fields and nested paths', () => {
    const errors = [
      err('client_name', { isString: 'client_name must be a string' }),
      err('foo', { whitelistValidation: 'property foo should not exist' }),
      err('permissions', undefined, [
        err('0', undefined, [err('resource_id', { isUuid: 'resource_id must be a UUID' })]),
      ]),
      err('limit', { min: 'must not be less than 1' }),
    ];
    expect(flattenValidationErrors(errors)).toEqual([
      { field: 'client_name', message: 'client_name must be a string' },
      { field: 'foo', message: 'unknown field: foo' },
      { field: 'permissions.0.resource_id', message: 'permissions.0.resource_id must be a UUID' },
      { field: 'limit', message: 'limit: must not be less than 1' },
    ]);
    const e = validationException(errors.slice(0, 2));
    expect(e.code).toBe('invalid_request');
    expect(e.message).toBe('client_name must be a string; unknown field: foo');
    expect(e.details).toHaveLength(2);
  });
});
