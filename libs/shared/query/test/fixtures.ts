/** Test-only record specs shared by the query specs. */
import { defineRecord } from '../src/index.js';

export const clients = defineRecord({
  name: 'client',
  attributes: [
    { name: 'id', column: 'c.id', type: 'uuid' },
    { name: 'client_name', column: 'c.client_name', type: 'string' },
    { name: 'client_type', column: 'c.client_type', type: 'string' },
    { name: 'client_description', column: '"c"."client_description"', type: 'string' },
    { name: 'is_public', column: 'c.is_public', type: 'boolean' },
    { name: 'tenant_id', column: 'c.tenant_id', type: 'uuid' },
    { name: 'logins', column: 'c.logins', type: 'integer' },
    { name: 'score', column: 'c.score', type: 'number' },
    { name: 'created_at', column: 'c.created_at', type: 'datetime' },
    { name: 'client_metadata', column: 'c.client_metadata', type: 'json', opaque: false },
    { name: 'metadata', column: 'c.metadata', type: 'json' },
    {
      name: 'client_secret',
      column: 'c.client_secret',
      type: 'string',
      filter: false,
      sort: false,
      select: false,
    },
    { name: 'name_lower', column: 'lower(c.client_name)', type: 'string' },
  ],
  children: ['resources', 'permissions'],
  extraFields: [{ name: 'aggregations', v2Name: 'aggregates' }, 'links'],
});

/** Deterministic PRNG (mulberry32), so fuzz failures can be replayed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

const SQL_WORDS = new Set([
  'AND',
  'OR',
  'NOT',
  'IS',
  'NULL',
  'LIKE',
  'ILIKE',
  'IN',
  'TRUE',
  'CAST',
  'AS',
  'uuid',
  'bigint',
  'numeric',
  'boolean',
  'timestamptz',
  'jsonb',
  'text',
  'CASE',
  'WHEN',
  'THEN',
  'END',
  'jsonb_typeof',
]);

/**
 * Asserts the SQL holds nothing but the spec's column expressions, placeholders and the compiler's
 * own vocabulary: no piece of the input can have reached the SQL text.
 */
export function unsafeSqlPart(sql: string, columns: readonly string[]): string | undefined {
  let rest = sql;
  for (const col of [...columns].sort((a, b) => b.length - a.length)) rest = rest.split(col).join(' ');
  const re = /\s+|\$\d+|[(),]|<>|<=|>=|[=<>]|#>>|#>|'number'|text\[\]|[A-Za-z_]+/y;
  let i = 0;
  while (i < rest.length) {
    re.lastIndex = i;
    const m = re.exec(rest);
    if (!m) return rest.slice(i);
    if (/^[A-Za-z_]+$/.test(m[0]) && !SQL_WORDS.has(m[0])) return m[0];
    i = re.lastIndex;
  }
  return undefined;
}

/** Placeholders used by the SQL must be exactly $offset+1 .. $offset+params.length. */
export function placeholdersMatch(sql: string, paramCount: number, offset = 0): boolean {
  const used = new Set([...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  if (used.size !== paramCount) return false;
  for (let n = offset + 1; n <= offset + paramCount; n++) if (!used.has(n)) return false;
  return true;
}

const STRINGS = ["'a'", "'O''Brien'", "'%x_'", "''", "'😀'", "'\u200f'", "'x'' or ''1''=''1'", "'a\\%'"];
const UUIDS = ["'6f1c2b7e-0d4a-4f6e-9c1b-2a3d4e5f6a7b'", "'00000000-0000-0000-0000-000000000000'"];
const INTS = ['0', '1', '-5', '42', "'7'", '9223372036854775807'];
const NUMS = ['0', '1.5', '-2.25', '100', "'3.5'"];
const DATES = ["'2024-01-01'", "'2024-06-30T12:00:00Z'", "'1999-12-31T23:59:59.999+02:00'"];
const BOOLS = ['true', 'false', 'TRUE', "'false'"];
const OPS = ['=', '!=', '<>', '<', '<=', '>', '>='];

/** A random, mostly well-typed `q` over the `clients` fixture (some values deliberately mistyped). */
export function randomQuery(r: () => number, depth = 0): string {
  const roll = r();
  if (depth < 4 && roll < 0.2) {
    return `${randomQuery(r, depth + 1)} ${pick(r, ['and', 'OR', 'And', 'or'])} ${randomQuery(r, depth + 1)}`;
  }
  if (depth < 4 && roll < 0.3) return `(${randomQuery(r, depth + 1)})`;
  if (depth < 4 && roll < 0.35) return `not ${randomQuery(r, depth + 1)}`;
  const attr = pick(r, [
    ['client_name', STRINGS],
    ['client_type', STRINGS],
    ['name_lower', STRINGS],
    ['id', UUIDS],
    ['tenant_id', UUIDS],
    ['logins', INTS],
    ['score', NUMS],
    ['created_at', DATES],
    ['is_public', BOOLS],
    ['metadata.tags', [...STRINGS, ...NUMS, ...BOOLS]],
    ['metadata.a.b', [...STRINGS, ...INTS]],
    ['client_metadata.refresh_token.expiration_lifetime', NUMS],
    ['client_metadata.grant_types.0', STRINGS],
  ] as [string, string[]][]);
  const [name, pool] = attr;
  const values = r() < 0.1 ? [...STRINGS, ...INTS, ...DATES, ...BOOLS, 'null'] : pool;
  const form = r();
  if (form < 0.55) return `${name} ${pick(r, OPS)} ${pick(r, values)}`;
  if (form < 0.7) return `${name} ${pick(r, ['like', 'ILIKE', 'not like', 'not ilike'])} ${pick(r, STRINGS)}`;
  if (form < 0.85) {
    const n = 1 + Math.floor(r() * 3);
    const list = Array.from({ length: n }, () => pick(r, values)).join(', ');
    return `${name} ${pick(r, ['in', 'not in', 'IN'])} (${list})`;
  }
  return `${name} ${pick(r, ['is null', 'is not null', 'IS NOT NULL'])}`;
}
