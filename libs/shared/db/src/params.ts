// The UUID check lives in @gatehouse/query so that @gatehouse/http's path parameter can use it too.
export { isUuid } from '@gatehouse/query';

/** `$n` placeholders in order: `p.add(value)` appends a parameter and returns its placeholder. */
export class Params {
  readonly values: unknown[];

  constructor(initial: readonly unknown[] = []) {
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

/**
 * Timestamps leave PostgreSQL as ISO 8601 UTC text with milliseconds (`2026-11-22T03:17:07.123Z`, the form
 * `Date.toJSON` gives): no Date object is built per field and turned back into text for every answer.
 */
export const iso = (expr: string) => `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** An ISO 8601 UTC timestamp as text. */
export type Timestamp = string;
