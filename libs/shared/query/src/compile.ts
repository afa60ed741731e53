/**
 * Compiles `q` into a parameterized SQL condition over a record spec.
 *
 * - Column expressions come only from the spec; every value is a `$n` parameter, never SQL text.
 * - Names are those of the presentation (see record-spec.ts): v1 names under v1, v2 or v1 names under v2.
 * - `json` attributes are reached by dotted paths: `metadata.tags = 'x'` compiles to
 *   `(m.metadata #>> CAST($1 AS text[])) = $2` with `$1 = ['tags']`. The columns must be `jsonb`.
 *   A string compares the value's text, a number compares numerically (values that are not JSON
 *   numbers never match), `true`/`false` compare JSON booleans. A whole json attribute only takes
 *   `is null` / `is not null`.
 * - `= null` / `!= null` mean `IS NULL` / `IS NOT NULL`; `!=` is emitted as `<>`.
 * - SQL shape: `(a AND b)`, `(a OR b)`, `NOT (a)`; an empty `q` compiles to `TRUE` with no params.
 */
import { DomainError } from '@gatehouse/errors';
import { MAX_Q_LENGTH, qError, show } from './q-error.js';
import { type Expr, type Literal, type NameRef, parseQ } from './parser.js';
import { type ApiVersion, type RecordSpec, type ResolvedAttribute } from './record-spec.js';
import type { CompareOp } from './tokenizer.js';
import { camelToSnake } from './case.js';
import { type SqlValue, checkLikePattern, checkText, coerce } from './values.js';

export interface CompileOptions {
  version?: ApiVersion;
  /** Number of parameters the caller already uses; the first one here is `$<paramOffset + 1>`. */
  paramOffset?: number;
}

export interface WhereClause {
  sql: string;
  params: unknown[];
}

type Target =
  | { kind: 'column'; attr: ResolvedAttribute; column: string }
  | { kind: 'json'; attr: ResolvedAttribute; column: string; path: string[] }
  | { kind: 'document'; attr: ResolvedAttribute; column: string };

const SIMPLE_COLUMN_RE = /^[A-Za-z0-9_."]+$/;

class Compiler {
  readonly params: unknown[] = [];

  constructor(
    private readonly spec: RecordSpec,
    private readonly version: ApiVersion,
    private readonly offset: number,
  ) {}

  private param(value: unknown): string {
    this.params.push(value);
    return `$${this.offset + this.params.length}`;
  }

  private value(v: SqlValue): string {
    const p = this.param(v.param);
    return v.cast ? `CAST(${p} AS ${v.cast})` : p;
  }

  private target(ref: NameRef): Target {
    const [head, ...path] = ref.text.split('.');
    const attr = this.spec.attribute(head, this.version);
    if (!attr) throw qError(`unknown attribute '${show(head)}' for ${this.spec.name}`, ref.pos);
    if (!attr.filter) throw qError(`attribute '${head}' cannot be used in q`, ref.pos);
    const column = SIMPLE_COLUMN_RE.test(attr.column) ? attr.column : `(${attr.column})`;
    if (path.length === 0)
      return attr.type === 'json' ? { kind: 'document', attr, column } : { kind: 'column', attr, column };
    if (attr.type !== 'json')
      throw qError(`attribute '${head}' is not an object; '${show(ref.text)}' is not allowed`, ref.pos);
    const keys = this.version === 'v2' && !attr.opaque ? path.map(camelToSnake) : path;
    return { kind: 'json', attr, column, path: keys };
  }

  compile(e: Expr): string {
    switch (e.kind) {
      case 'or':
      case 'and':
        return `(${e.items.map((i) => this.compile(i)).join(e.kind === 'or' ? ' OR ' : ' AND ')})`;
      case 'not': {
        const inner = this.compile(e.item);
        return inner.startsWith('(') && (e.item.kind === 'and' || e.item.kind === 'or')
          ? `NOT ${inner}`
          : `NOT (${inner})`;
      }
      case 'compare':
        return this.compare(this.target(e.name), e.op, e.value, e.name);
      case 'like':
        return this.like(this.target(e.name), e, e.name);
      case 'in':
        return this.in(this.target(e.name), e.negated, e.values, e.name);
      case 'null':
        return this.isNull(this.target(e.name), e.negated);
    }
  }

  private isNull(t: Target, negated: boolean): string {
    const expr = t.kind === 'json' ? this.jsonText(t) : t.column;
    return `${expr} IS ${negated ? 'NOT ' : ''}NULL`;
  }

  private jsonText(t: Extract<Target, { kind: 'json' }>, pathParam = this.param(t.path)): string {
    return `(${t.column} #>> CAST(${pathParam} AS text[]))`;
  }

  private compare(t: Target, op: CompareOp, lit: Literal, ref: NameRef): string {
    const sqlOp = op === '!=' ? '<>' : op;
    if (lit.kind === 'null') {
      if (sqlOp !== '=' && sqlOp !== '<>') {
        throw qError(`'${op}' cannot compare with null; use IS NULL`, lit.pos);
      }
      return this.isNull(t, sqlOp === '<>');
    }
    if (t.kind === 'document') throw this.documentError(t, ref);
    if (t.kind === 'column') {
      if (t.attr.type === 'json') throw this.documentError(t, ref);
      if (t.attr.type === 'boolean' && sqlOp !== '=' && sqlOp !== '<>') {
        throw qError(`'${op}' does not apply to boolean attribute '${t.attr.name}'; use = or !=`, ref.pos);
      }
      return `${t.column} ${sqlOp} ${this.value(coerce(ref.text, t.attr.type, lit))}`;
    }
    // A key inside a json attribute.
    switch (lit.kind) {
      case 'string':
        return `${this.jsonText(t)} ${sqlOp} ${this.param(checkText(ref.text, lit.value, lit.pos))}`;
      case 'number': {
        const numeric = coerce(ref.text, 'number', lit);
        const path = this.param(t.path);
        const value = this.value(numeric);
        const json = `(${t.column} #> CAST(${path} AS text[]))`;
        const num = `CASE WHEN jsonb_typeof(${json}) = 'number' THEN CAST(${this.jsonText(t, path)} AS numeric) END`;
        return `(${num}) ${sqlOp} ${value}`;
      }
      case 'boolean': {
        if (sqlOp !== '=' && sqlOp !== '<>') {
          throw qError(`'${op}' does not apply to true/false; use = or !=`, lit.pos);
        }
        const path = this.param(t.path);
        const value = this.value({ param: String(lit.value), cast: 'jsonb' });
        return `(${t.column} #> CAST(${path} AS text[])) ${sqlOp} ${value}`;
      }
    }
  }

  private like(t: Target, e: Extract<Expr, { kind: 'like' }>, ref: NameRef): string {
    if (t.kind === 'document') throw this.documentError(t, ref);
    if (t.kind === 'column' && t.attr.type !== 'string') {
      throw qError(`LIKE and ILIKE apply only to string attributes, not to '${t.attr.name}'`, ref.pos);
    }
    const pattern = checkLikePattern(ref.text, e.pattern);
    const expr = t.kind === 'json' ? this.jsonText(t) : t.column;
    return `${expr} ${e.negated ? 'NOT ' : ''}${e.insensitive ? 'ILIKE' : 'LIKE'} ${this.param(pattern)}`;
  }

  private in(t: Target, negated: boolean, values: Literal[], ref: NameRef): string {
    if (t.kind === 'document') throw this.documentError(t, ref);
    const nul = values.find((v) => v.kind === 'null');
    if (nul) throw qError('null cannot be in an IN list; use IS NULL', nul.pos);
    if (t.kind === 'json') {
      const any = values.map((v) => this.compare(t, '=', v, ref)).join(' OR ');
      return negated ? `NOT (${any})` : `(${any})`;
    }
    if (t.attr.type === 'json') throw this.documentError(t, ref);
    const type = t.attr.type;
    const list = values.map((v) => this.value(coerce(ref.text, type, v))).join(', ');
    return `${t.column} ${negated ? 'NOT IN' : 'IN'} (${list})`;
  }

  private documentError(t: Target, ref: NameRef): DomainError {
    return qError(
      `'${t.attr.name}' is an object: compare a key inside it (${t.attr.name}.<key>) or use IS NULL`,
      ref.pos,
    );
  }
}

/**
 * Compiles `q` for `spec`. Throws only `DomainError(invalid_request)` for bad input: syntax errors,
 * unknown attributes, values of the wrong type, over 2,000 characters, nesting over 64 levels.
 */
export function compileWhere(q: string, spec: RecordSpec, opts: CompileOptions = {}): WhereClause {
  const offset = opts.paramOffset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new TypeError('paramOffset must be an integer >= 0');
  if (typeof q !== 'string') throw qError('must be a string');
  if (q.length > MAX_Q_LENGTH) throw qError(`longer than ${MAX_Q_LENGTH} characters`);
  const expr = parseQ(q);
  if (!expr) return { sql: 'TRUE', params: [] };
  const compiler = new Compiler(spec, opts.version ?? 'v1', offset);
  return { sql: compiler.compile(expr), params: compiler.params };
}
