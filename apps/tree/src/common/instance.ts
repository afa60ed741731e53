import type { CallerInfo } from '@gatehouse/bearer';
import { unauthorized } from '@gatehouse/errors';
import { isUuid } from './params.js';

/**
 * The instance a tree record belongs to, as the tree database stores it (`trees.instance_id`,
 * `tree_settings.instance_id`): the caller's instance id from /tokeninfo, or the nil uuid for the default instance
 * (migration 1790000500000: the tree database does not know the default instance's id, and the trees made before
 * instances existed are the default instance's).
 */
export type InstanceKey = string & { readonly __instanceKey: true };

export const DEFAULT_INSTANCE_KEY = '00000000-0000-0000-0000-000000000000' as InstanceKey;

/** The caller's instance key; 401 when the token server did not name the token's instance (the guard refuses first). */
export function instanceKeyOf(caller: CallerInfo | undefined): InstanceKey {
  if (caller?.defaultInstance === true) return DEFAULT_INSTANCE_KEY;
  if (caller?.defaultInstance === false && isUuid(caller.instanceId))
    return caller.instanceId.toLowerCase() as InstanceKey;
  throw unauthorized("The token server did not tell the access token's instance; it cannot be used here");
}
