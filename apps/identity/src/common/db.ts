import { conflict } from '@gatehouse/errors';
import { findPgError } from '@gatehouse/http';

/**
 * Runs `work`; a unique violation of one of the named constraints becomes a 409 `conflict` with a message a caller
 * understands (which value is taken), instead of the generic one. Other errors pass through to the error filter.
 */
export async function withConflicts<T>(messages: Record<string, string>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const pg = findPgError(err);
    if (pg?.code === '23505' && pg.constraint && messages[pg.constraint])
      throw conflict(messages[pg.constraint]);
    throw err;
  }
}

/** `$n` placeholders: `p.add(value)` appends a parameter and returns its placeholder. */
export class Params {
  readonly values: unknown[];

  constructor(initial: unknown[] = []) {
    this.values = [...initial];
  }

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  get length(): number {
    return this.values.length;
  }
}
