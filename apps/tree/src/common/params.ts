import { isUuid } from '@gatehouse/db';
import { invalidRequest } from '@gatehouse/errors';

export { isUuid };

/** A uuid path parameter, lower-cased; a malformed one is 400 naming the parameter. */
export function uuidParam(name: string, value: string): string {
  if (!isUuid(value))
    throw invalidRequest(`${name} must be a UUID`, [{ field: name, message: 'must be a UUID' }]);
  return value.toLowerCase();
}

/** An optional boolean query flag (`?cascade=true`); anything but true/false is 400. */
export function booleanQuery(name: string, value: unknown): boolean {
  if (value === undefined || value === '') return false;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw invalidRequest(`Query parameter ${name} must be true or false`, [
    { field: name, message: 'must be true or false' },
  ]);
}
