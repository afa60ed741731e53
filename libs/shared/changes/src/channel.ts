/**
 * The identity change channel: what the triggers of the identity tables announce (see watched.ts), and how a
 * listener reads it.
 */

/** The PostgreSQL channel on which the identity tables' triggers announce changes (in the identity database). */
export const IDENTITY_CHANGES_CHANNEL = 'gatehouse_identity_changes';

/** The channel on which cache subscribers acknowledge a settle marker (see settle.ts). */
export const CACHE_ACKS_CHANNEL = 'gatehouse_cache_acks';

/**
 * One announced change, as the caches of a service care:
 * - `client`: a client's reach (global, tenant), existence or grants;
 * - `user`: a user was changed, blocked or deleted, got a new password, or a grant of it was revoked;
 * - `all`: anything wider (a resource changed or went, a scope went), or a gap in the feed.
 */
export type IdentityChange = { kind: 'client'; id: string } | { kind: 'user'; id: string } | { kind: 'all' };

/** The payload of a change: `all`, `client:<id>`, `user:<id>` (as the triggers send it: the id in lower case). */
export function changePayload(change: IdentityChange): string {
  return change.kind === 'all' ? 'all' : `${change.kind}:${change.id.toLowerCase()}`;
}

/**
 * The tag of a cache entry that depends on this client or user: the payload of the change that drops it
 * (`client:<id>`, `user:<id>`, id in lower case). See TaggedCache.
 */
export function changeTag(kind: 'client' | 'user', id: string): string {
  return `${kind}:${id.toLowerCase()}`;
}

/**
 * The prefix of a settle marker on the change channel (`sync:<token>`, sent by the identity service after each
 * change: see settle.ts). It changes nothing: a listener that is not a cache subscriber ignores it.
 */
export const SYNC_PREFIX = 'sync:';

/** A payload back into a change: undefined for a settle marker (nothing changed), anything unknown counts as `all`. */
export function parseChange(payload: string | undefined): IdentityChange | undefined {
  if (payload?.startsWith(SYNC_PREFIX)) return undefined;
  const [kind, id] = (payload ?? 'all').split(':', 2);
  if ((kind === 'client' || kind === 'user') && id) return { kind, id: id.toLowerCase() };
  return { kind: 'all' };
}
