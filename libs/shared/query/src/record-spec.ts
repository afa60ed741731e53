/**
 * Record specs: what a record type exposes to `q`, `fields` and `sort`, declared once per record type.
 *
 * Names: `name` is the v1 (snake_case) API name and the canonical name everywhere in this lib.
 * Each attribute, child and extra field also has a v2 name (`v2Name`, default: camelCase of `name`).
 * Under v1 only the v1 name is accepted; under v2 both the v2 name and the v1 name are accepted
 * (document 2 keeps most record fields in snake_case while its envelope and query parameters are
 * camelCase, so a v2 client may use either spelling). Parsed results always carry canonical names.
 */
import { snakeToCamel } from './case.js';

export type AttrType = 'string' | 'number' | 'integer' | 'boolean' | 'datetime' | 'uuid' | 'json';
export type ApiVersion = 'v1' | 'v2';

export const ATTR_TYPES: readonly AttrType[] = [
  'string',
  'number',
  'integer',
  'boolean',
  'datetime',
  'uuid',
  'json',
];

export interface AttributeSpec {
  /** v1 snake_case API name, e.g. `client_name`. */
  name: string;
  /** SQL expression, e.g. `c.client_name` or `"c"."client_name"`. Comes from code only, never from input. */
  column: string;
  type: AttrType;
  /** May appear in `q` (default true). */
  filter?: boolean;
  /** May appear in `sort` (default true, false for `json`). */
  sort?: boolean;
  /** The ORDER BY expression when it differs from `column` (e.g. `lower(c.client_name)`, served by an index). */
  sortColumn?: string;
  /** May appear in `fields` (default true). */
  select?: boolean;
  /** Name under v2 (default: camelCase of `name`). */
  v2Name?: string;
  /**
   * For `json` attributes: the keys inside are user-defined (default true), so dotted paths in `q`
   * are used verbatim and `toCamel`/`toSnake` leave the value alone. Set false for structured
   * metadata whose keys are ours (`client_metadata.grant_types`): under v2 its path segments are
   * accepted in camelCase too and mapped to snake_case.
   */
  opaque?: boolean;
}

/** An attribute with every default filled in. */
export interface ResolvedAttribute extends AttributeSpec {
  filter: boolean;
  sort: boolean;
  select: boolean;
  v2Name: string;
  opaque: boolean;
}

/** A selectable name that is not a column: a string, or `{ name, v2Name }` when v2 renames it. */
export type FieldNameInput = string | { name: string; v2Name?: string };

export interface FieldName {
  name: string;
  v2Name: string;
}

export interface RecordSpecInput {
  name: string;
  attributes: AttributeSpec[];
  /** Expandable child collections (v1 names), e.g. `['resources', 'permissions']`. */
  children?: FieldNameInput[];
  /** Selectable names that are not columns, e.g. `[{ name: 'aggregations', v2Name: 'aggregates' }, 'links']`. */
  extraFields?: FieldNameInput[];
}

export interface RecordSpec {
  readonly name: string;
  readonly attributes: readonly ResolvedAttribute[];
  readonly children: readonly FieldName[];
  readonly extraFields: readonly FieldName[];
  /** The `id` attribute, when the record has one (used to break sort ties). */
  readonly idAttribute?: ResolvedAttribute;
  /** v1 names of opaque `json` attributes, for `toCamel` / `toSnake`. */
  readonly opaqueKeys: readonly string[];
  /** Attribute by its name under the given presentation (see the module comment). */
  attribute(name: string, version: ApiVersion): ResolvedAttribute | undefined;
  /** Canonical name of a selectable field (attribute, child or extra field) under the given presentation. */
  field(name: string, version: ApiVersion): string | undefined;
  /** The name a canonical field has under the given presentation. */
  present(name: string, version: ApiVersion): string;
}

/** Words of the `q` grammar; no attribute may be named like one. */
export const Q_KEYWORDS: ReadonlySet<string> = new Set([
  'and',
  'or',
  'not',
  'like',
  'ilike',
  'in',
  'is',
  'null',
  'true',
  'false',
]);

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

function checkName(record: string, what: string, name: unknown): string {
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw new TypeError(`defineRecord(${record}): invalid ${what} name ${JSON.stringify(name)}`);
  }
  if (Q_KEYWORDS.has(name.toLowerCase())) {
    throw new TypeError(`defineRecord(${record}): ${what} name "${name}" is a q keyword`);
  }
  return name;
}

function fieldName(record: string, what: string, input: FieldNameInput): FieldName {
  const name = checkName(record, what, typeof input === 'string' ? input : input?.name);
  const v2 = typeof input === 'string' ? undefined : input.v2Name;
  return { name, v2Name: v2 === undefined ? snakeToCamel(name) : checkName(record, `${what} v2`, v2) };
}

/**
 * Validates a record spec, fills defaults, derives v2 names and precomputes the lookup maps.
 * Throws TypeError on a malformed spec (a programming error, found at start-up).
 */
export function defineRecord(input: RecordSpecInput): RecordSpec {
  const record = typeof input?.name === 'string' && input.name ? input.name : '?';
  if (!Array.isArray(input?.attributes) || input.attributes.length === 0) {
    throw new TypeError(`defineRecord(${record}): attributes must be a non-empty array`);
  }
  const attributes: ResolvedAttribute[] = input.attributes.map((a) => {
    const name = checkName(record, 'attribute', a?.name);
    if (!ATTR_TYPES.includes(a.type)) {
      throw new TypeError(`defineRecord(${record}): attribute ${name} has unknown type ${String(a.type)}`);
    }
    if (typeof a.column !== 'string' || a.column.trim() === '' || /;|--|\/\*|\$/.test(a.column)) {
      throw new TypeError(`defineRecord(${record}): attribute ${name} needs a plain SQL column expression`);
    }
    if (a.sortColumn !== undefined && (a.sortColumn.trim() === '' || /;|--|\/\*|\$/.test(a.sortColumn))) {
      throw new TypeError(
        `defineRecord(${record}): attribute ${name} needs a plain SQL sortColumn expression`,
      );
    }
    return Object.freeze({
      ...a,
      name,
      filter: a.filter ?? true,
      sort: a.sort ?? a.type !== 'json',
      select: a.select ?? true,
      v2Name: a.v2Name === undefined ? snakeToCamel(name) : checkName(record, 'attribute v2', a.v2Name),
      opaque: a.type === 'json' ? (a.opaque ?? true) : false,
    });
  });
  const children = (input.children ?? []).map((c) => fieldName(record, 'child', c));
  const extraFields = (input.extraFields ?? []).map((c) => fieldName(record, 'extra field', c));

  const all: FieldName[] = [...attributes, ...children, ...extraFields];
  const v1 = new Map<string, string>();
  const v2 = new Map<string, string>();
  for (const f of all) {
    if (v1.has(f.name)) throw new TypeError(`defineRecord(${record}): duplicate name ${f.name}`);
    v1.set(f.name, f.name);
  }
  for (const f of all) {
    const other = v1.get(f.v2Name) ?? v2.get(f.v2Name);
    if (other !== undefined && other !== f.name) {
      throw new TypeError(`defineRecord(${record}): v2 name ${f.v2Name} of ${f.name} collides with ${other}`);
    }
    v2.set(f.v2Name, f.name);
  }
  for (const [name, canonical] of v1) if (!v2.has(name)) v2.set(name, canonical);

  const byName = new Map(attributes.map((a) => [a.name, a]));
  const presentV2 = new Map(all.map((f) => [f.name, f.v2Name]));
  const spec: RecordSpec = {
    name: record,
    attributes: Object.freeze(attributes),
    children: Object.freeze(children),
    extraFields: Object.freeze(extraFields),
    idAttribute: byName.get('id'),
    opaqueKeys: Object.freeze(attributes.filter((a) => a.opaque).map((a) => a.name)),
    attribute(name, version) {
      const canonical = (version === 'v2' ? v2 : v1).get(name);
      return canonical === undefined ? undefined : byName.get(canonical);
    },
    field(name, version) {
      return (version === 'v2' ? v2 : v1).get(name);
    },
    present(name, version) {
      return version === 'v2' ? (presentV2.get(name) ?? name) : name;
    },
  };
  return Object.freeze(spec);
}
