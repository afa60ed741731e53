import { conflict, DomainError } from '@gatehouse/errors';
import { findPgError } from './pg-errors.js';

/**
 * A unique violation of one of the named constraints as a 409 `conflict` with a message a caller understands (which
 * value is taken); any other error unchanged (the HTTP error filter maps it). `normalize` maps a constraint name
 * first (a partition's own constraint to its parent's).
 */
export function uniqueConflict(
  err: unknown,
  messages: Record<string, string>,
  normalize: (constraint: string) => string = (c) => c,
): unknown {
  if (err instanceof DomainError) return err;
  const pg = findPgError(err);
  const constraint = pg?.constraint ? normalize(pg.constraint) : undefined;
  if (pg?.code === '23505' && constraint && messages[constraint]) return conflict(messages[constraint]);
  return err;
}

/** Runs `work`, turning the named unique violations into 409s (see uniqueConflict). */
export async function withConflicts<T>(
  messages: Record<string, string>,
  work: () => Promise<T>,
  normalize?: (constraint: string) => string,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw uniqueConflict(err, messages, normalize);
  }
}
