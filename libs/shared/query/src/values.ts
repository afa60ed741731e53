/**
 * Checks and coerces `q` literals against attribute types, so that a bad value is a 400 naming the
 * attribute and position, never a PostgreSQL cast error. Each coerced value carries the SQL type its
 * parameter is cast to (`CAST($n AS uuid)`), which keeps the SQL independent of driver type inference.
 */
import { assertUnreachable } from '@gatehouse/errors';
import { qError, show } from './q-error.js';
import type { Literal } from './parser.js';
import type { AttrType } from './record-spec.js';
import { isUuid } from './uuid.js';

export interface SqlValue {
  param: unknown;
  /** SQL type the placeholder is cast to; undefined for text. */
  cast?: 'uuid' | 'bigint' | 'numeric' | 'boolean' | 'timestamptz' | 'jsonb';
}

const INTEGER_RE = /^-?\d+$/;
const DECIMAL_RE = /^-?\d+(\.\d+)?$/;
const DATETIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,6})?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/;
const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const INT8_MIN = -(2n ** 63n);
const INT8_MAX = 2n ** 63n - 1n;
/** Longest accepted number literal: keeps values inside double precision's range and precision-sane. */
const MAX_NUMBER_LENGTH = 40;

function literalText(lit: Literal): string {
  switch (lit.kind) {
    case 'string':
      return `'${show(lit.value)}'`;
    case 'number':
      return show(lit.text);
    case 'boolean':
      return String(lit.value);
    case 'null':
      return 'null';
  }
}

function mismatch(attr: string, expected: string, lit: Literal): never {
  throw qError(`${attr} expects ${expected}, got ${literalText(lit)}`, lit.pos);
}

/** A string PostgreSQL text can hold: no NUL character, no unpaired UTF-16 surrogate. */
export function checkText(attr: string, value: string, pos: number): string {
  if (value.includes('\0')) throw qError(`the value for ${attr} contains a NUL character`, pos);
  if (LONE_SURROGATE_RE.test(value))
    throw qError(`the value for ${attr} contains an unpaired surrogate`, pos);
  return value;
}

/** A LIKE pattern: valid text that does not end in a lone escape character (backslash). */
export function checkLikePattern(attr: string, lit: Literal): string {
  if (lit.kind !== 'string') mismatch(attr, 'a quoted pattern for LIKE', lit);
  const value = checkText(attr, lit.value, lit.pos);
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '\\') {
      if (i === value.length - 1)
        throw qError(`LIKE pattern for ${attr} ends with an escape character`, lit.pos);
      i++;
    }
  }
  return value;
}

function numberText(attr: string, lit: Literal, expected: string, re: RegExp): string {
  const text = lit.kind === 'number' ? lit.text : lit.kind === 'string' ? lit.value.trim() : undefined;
  if (text === undefined || !re.test(text)) mismatch(attr, expected, lit);
  if (text.length > MAX_NUMBER_LENGTH) throw qError(`the number for ${attr} is too long`, lit.pos);
  return text;
}

function datetime(attr: string, lit: Literal): string {
  const m = lit.kind === 'string' ? DATETIME_RE.exec(lit.value) : null;
  if (!m) mismatch(attr, 'an ISO 8601 date-time string', lit);
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const check = new Date(Date.UTC(2000, month - 1, day));
  const validDay = check.getUTCMonth() === month - 1 && check.getUTCDate() === day;
  const leapOk = !(month === 2 && day === 29) || (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0));
  const zoneOk = /^[Zz]$/.test(zone) || (Number(zone.slice(1, 3)) <= 15 && Number(zone.slice(-2)) <= 59);
  if (year < 1 || !validDay || !leapOk || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59 || !zoneOk) {
    throw qError(`${attr} expects a valid date-time, got ${literalText(lit)}`, lit.pos);
  }
  const offset = /^[Zz]$/.test(zone)
    ? 'Z'
    : zone.length === 3
      ? `${zone}:00`
      : zone.replace(/^(...):?(..)$/, '$1:$2');
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${frac}${offset}`;
}

/** Coerces a non-null literal to a parameter for a column of the given type. */
export function coerce(attr: string, type: Exclude<AttrType, 'json'>, lit: Literal): SqlValue {
  switch (type) {
    case 'string':
      if (lit.kind !== 'string') mismatch(attr, 'a quoted string', lit);
      return { param: checkText(attr, lit.value, lit.pos) };
    case 'uuid':
      if (lit.kind !== 'string' || !isUuid(lit.value)) mismatch(attr, 'a quoted UUID', lit);
      return { param: lit.value.toLowerCase(), cast: 'uuid' };
    case 'integer': {
      const text = numberText(attr, lit, 'an integer', INTEGER_RE);
      const n = BigInt(text);
      if (n < INT8_MIN || n > INT8_MAX) throw qError(`the integer for ${attr} is out of range`, lit.pos);
      return { param: n.toString(), cast: 'bigint' };
    }
    case 'number': {
      const text = numberText(attr, lit, 'a number', DECIMAL_RE);
      return { param: text, cast: 'numeric' };
    }
    case 'boolean':
      if (lit.kind === 'boolean') return { param: lit.value, cast: 'boolean' };
      if (lit.kind === 'string' && (lit.value === 'true' || lit.value === 'false')) {
        return { param: lit.value === 'true', cast: 'boolean' };
      }
      return mismatch(attr, 'true or false', lit);
    case 'datetime':
      return { param: datetime(attr, lit), cast: 'timestamptz' };
    default:
      return assertUnreachable(type);
  }
}
