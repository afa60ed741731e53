import { isUuid } from '@gatehouse/db';
import { invalidRequest } from '@gatehouse/errors';
import { UuidParam } from '@gatehouse/http';

export { isUuid };

/** The `tree_node_id` path parameter, lower-cased; a malformed one is 400 with tree's message. */
export const NodeIdParam = () => UuidParam('tree_node_id', 'tree_node_id must be a UUID');

/** An optional boolean query flag (`?cascade=true`); anything but true/false is 400. */
export function booleanQuery(name: string, value: unknown): boolean {
  if (value === undefined || value === '') return false;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw invalidRequest(`Query parameter ${name} must be true or false`, [
    { field: name, message: 'must be true or false' },
  ]);
}
