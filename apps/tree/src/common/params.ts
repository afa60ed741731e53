import { invalidRequest } from '@gatehouse/errors';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

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
