/**
 * Key-case conversion between the two presentations of the identity API.
 *
 * `/api/v1` shapes are snake_case; `/api/v2` presents the envelope and query parameters in camelCase.
 * `toCamel` converts the keys of a (deep) JSON-like value for output, `toSnake` converts a parsed v2 body
 * back to the canonical snake_case keys the services work with.
 *
 * Values are never touched. Keys inside "opaque" members are never converted either: their keys belong
 * to the user (free-form metadata), not to us. The default opaque members are `DEFAULT_OPAQUE_KEYS`;
 * a record spec derives its own list from its `json` attributes (`spec.opaqueKeys`).
 */
import { invalidRequest } from '@gatehouse/errors';

/** Members whose value is user-defined JSON: kept verbatim by `toCamel` / `toSnake`. */
export const DEFAULT_OPAQUE_KEYS: readonly string[] = ['app_metadata', 'user_metadata', 'metadata'];

export interface CaseOptions {
  /** Keys (snake_case; the camelCase form is matched too) whose values are copied without conversion. */
  opaqueKeys?: Iterable<string>;
}

/** `client_name` -> `clientName`; leading underscores and already-camel names are kept. */
export function snakeToCamel(name: string): string {
  return name.replace(/([A-Za-z0-9])_+([A-Za-z0-9])/g, (_m, a: string, b: string) => a + b.toUpperCase());
}

/** `clientName` -> `client_name`; already-snake names are kept. */
export function camelToSnake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Sets an own property safely (a key named `__proto__` must not change the prototype). */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function opaqueSet(opts: CaseOptions | undefined): Set<string> {
  const keys = [...(opts?.opaqueKeys ?? DEFAULT_OPAQUE_KEYS)];
  return new Set([...keys, ...keys.map(snakeToCamel), ...keys.map(camelToSnake)]);
}

function convert(
  value: unknown,
  rename: (key: string) => string,
  opaque: Set<string>,
  onCollision: (key: string) => void,
): unknown {
  if (Array.isArray(value)) return value.map((v) => convert(v, rename, opaque, onCollision));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const next = rename(key);
    if (Object.prototype.hasOwnProperty.call(out, next)) onCollision(next);
    const v = value[key];
    define(out, next, opaque.has(key) ? v : convert(v, rename, opaque, onCollision));
  }
  return out;
}

/** Deep snake_case -> camelCase key conversion (for v2 output). Values and opaque members are kept. */
export function toCamel<T = unknown>(value: unknown, opts?: CaseOptions): T {
  return convert(value, snakeToCamel, opaqueSet(opts), () => undefined) as T;
}

/**
 * Deep camelCase -> snake_case key conversion (for parsing v2 bodies). Two keys that map to the same
 * snake_case name (`clientName` and `client_name`) are a 400 `invalid_request` naming the field.
 */
export function toSnake<T = unknown>(value: unknown, opts?: CaseOptions): T {
  return convert(value, camelToSnake, opaqueSet(opts), (key) => {
    throw invalidRequest(`Field ${key} is given twice (in camelCase and snake_case)`, [
      { field: key, message: 'given twice' },
    ]);
  }) as T;
}
