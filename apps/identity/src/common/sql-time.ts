/**
 * Timestamps leave PostgreSQL as ISO 8601 UTC text with milliseconds (`2026-11-22T03:17:07.123Z`, the form
 * `Date.toJSON` gives): no Date object is built per field and turned back into text for every answer, which on a
 * list page of ten records was the largest single cost of shaping it. A leaf module (no imports).
 */
export const iso = (expr: string) => `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** An ISO 8601 UTC timestamp as text. */
export type Timestamp = string;
