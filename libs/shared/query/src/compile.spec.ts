import { DomainError, ErrorCode } from '@gatehouse/errors';
import { clients } from '../test/fixtures.js';
import { compileWhere } from './compile.js';

const c = (q: string, version: 'v1' | 'v2' = 'v1', paramOffset?: number) =>
  compileWhere(q, clients, { version, paramOffset });

/** Runs fn and returns the DomainError it throws (fails when it throws anything else or nothing). */
function rejection(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).code).toBe(ErrorCode.InvalidRequest);
    return e as DomainError;
  }
  throw new Error('expected a DomainError, nothing was thrown');
}

const UUID = '6f1c2b7e-0d4a-4f6e-9c1b-2a3d4e5f6a7b';

describe('compileWhere: comparisons', () => {
  it.each([
    ['=', '='],
    ['!=', '<>'],
    ['<>', '<>'],
    ['<', '<'],
    ['<=', '<='],
    ['>', '>'],
    ['>=', '>='],
  ])('string attribute with %s', (op, sqlOp) => {
    expect(c(`client_name ${op} 'abc'`)).toEqual({ sql: `c.client_name ${sqlOp} $1`, params: ['abc'] });
  });

  it('needs no spaces around operators', () => {
    expect(c(`client_name='a'`)).toEqual({ sql: 'c.client_name = $1', params: ['a'] });
    expect(c(`logins>=3`)).toEqual({ sql: 'c.logins >= CAST($1 AS bigint)', params: ['3'] });
  });

  it('keeps quoted column expressions and wraps complex ones in parentheses', () => {
    expect(c(`client_description = 'd'`).sql).toBe('"c"."client_description" = $1');
    expect(c(`name_lower = 'd'`).sql).toBe('(lower(c.client_name)) = $1');
  });

  it('casts typed parameters', () => {
    expect(c(`id = '${UUID.toUpperCase()}'`)).toEqual({ sql: 'c.id = CAST($1 AS uuid)', params: [UUID] });
    expect(c(`logins = -12`)).toEqual({ sql: 'c.logins = CAST($1 AS bigint)', params: ['-12'] });
    expect(c(`logins = '7'`)).toEqual({ sql: 'c.logins = CAST($1 AS bigint)', params: ['7'] });
    expect(c(`score > 1.5`)).toEqual({ sql: 'c.score > CAST($1 AS numeric)', params: ['1.5'] });
    expect(c(`score < -0.25`)).toEqual({ sql: 'c.score < CAST($1 AS numeric)', params: ['-0.25'] });
    expect(c(`is_public = true`)).toEqual({ sql: 'c.is_public = CAST($1 AS boolean)', params: [true] });
    expect(c(`is_public != FALSE`)).toEqual({ sql: 'c.is_public <> CAST($1 AS boolean)', params: [false] });
    expect(c(`is_public = 'false'`).params).toEqual([false]);
  });

  it('normalizes date-times to ISO 8601 with a zone (UTC when none is given)', () => {
    const cases: [string, string][] = [
      ['2024-02-29', '2024-02-29T00:00:00Z'],
      ['2024-01-02T03:04', '2024-01-02T03:04:00Z'],
      ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05Z'],
      ['2024-01-02T03:04:05.123456z', '2024-01-02T03:04:05.123456Z'],
      ['2024-01-02T03:04:05+05:30', '2024-01-02T03:04:05+05:30'],
      ['2024-01-02T03:04:05-0800', '2024-01-02T03:04:05-08:00'],
      ['2024-01-02T03:04:05+09', '2024-01-02T03:04:05+09:00'],
    ];
    for (const [input, param] of cases) {
      expect(c(`created_at > '${input}'`)).toEqual({
        sql: 'c.created_at > CAST($1 AS timestamptz)',
        params: [param],
      });
    }
  });

  it('turns = null and != null into IS NULL and IS NOT NULL', () => {
    expect(c('client_name = null')).toEqual({ sql: 'c.client_name IS NULL', params: [] });
    expect(c('client_name != NULL')).toEqual({ sql: 'c.client_name IS NOT NULL', params: [] });
    expect(rejection(() => c('client_name < null')).message).toMatch(/IS NULL/);
  });

  it('compiles is null and is not null', () => {
    expect(c('tenant_id is null')).toEqual({ sql: 'c.tenant_id IS NULL', params: [] });
    expect(c('tenant_id IS NOT NULL')).toEqual({ sql: 'c.tenant_id IS NOT NULL', params: [] });
    expect(c('metadata is null')).toEqual({ sql: 'c.metadata IS NULL', params: [] });
    expect(rejection(() => c('tenant_id is 5')).message).toBe(
      "Invalid q at position 14: expected NULL after IS, found '5'",
    );
    expect(rejection(() => c('tenant_id is not')).message).toBe(
      'Invalid q at position 17: expected NULL after IS NOT, found the end of q',
    );
  });
});

describe('compileWhere: like, ilike, in', () => {
  it('compiles like / ilike and their negations', () => {
    expect(c(`client_name like 'a%'`)).toEqual({ sql: 'c.client_name LIKE $1', params: ['a%'] });
    expect(c(`client_name ILIKE '%B_'`)).toEqual({ sql: 'c.client_name ILIKE $1', params: ['%B_'] });
    expect(c(`client_name not like 'a%'`)).toEqual({ sql: 'c.client_name NOT LIKE $1', params: ['a%'] });
    expect(c(`client_name Not ILike 'x'`)).toEqual({ sql: 'c.client_name NOT ILIKE $1', params: ['x'] });
    expect(c(`client_name like 'a\\%b\\\\'`).params).toEqual(['a\\%b\\\\']);
  });

  it('rejects like on non-string attributes, non-string patterns and a trailing escape', () => {
    expect(rejection(() => c(`logins like '1%'`)).message).toMatch(/only to string attributes/);
    expect(rejection(() => c(`client_name like 5`)).message).toMatch(/quoted pattern/);
    expect(rejection(() => c(`client_name like 'abc\\'`)).message).toMatch(/ends with an escape character/);
  });

  it('compiles in and not in lists with one parameter per value', () => {
    expect(c(`client_type in ('spa', 'native','web')`)).toEqual({
      sql: 'c.client_type IN ($1, $2, $3)',
      params: ['spa', 'native', 'web'],
    });
    expect(c(`logins NOT IN (1, 2)`)).toEqual({
      sql: 'c.logins NOT IN (CAST($1 AS bigint), CAST($2 AS bigint))',
      params: ['1', '2'],
    });
    expect(c(`id in ('${UUID}')`)).toEqual({ sql: 'c.id IN (CAST($1 AS uuid))', params: [UUID] });
  });

  it('rejects empty lists, null in lists, missing parentheses and wrong types in lists', () => {
    expect(rejection(() => c('client_type in ()')).message).toMatch(/expected a value, found '\)'/);
    expect(rejection(() => c(`client_type in ('a', null)`)).message).toMatch(/null cannot be in an IN list/);
    expect(rejection(() => c(`client_type in 'a'`)).message).toMatch(/expected '\(' after IN/);
    expect(rejection(() => c(`client_type in ('a' 'b')`)).message).toMatch(/expected ',' or '\)'/);
    expect(rejection(() => c(`logins in (1, 'x')`)).message).toMatch(/logins expects an integer, got 'x'/);
    expect(rejection(() => c(`client_type not between 1`)).message).toMatch(
      /expected LIKE, ILIKE or IN after NOT/,
    );
  });
});

describe('compileWhere: boolean logic', () => {
  it('gives and precedence over or', () => {
    expect(c(`client_name = 'a' or client_type = 'b' and logins = 1`)).toEqual({
      sql: '(c.client_name = $1 OR (c.client_type = $2 AND c.logins = CAST($3 AS bigint)))',
      params: ['a', 'b', '1'],
    });
    expect(c(`client_name = 'a' and client_type = 'b' or logins = 1`).sql).toBe(
      '((c.client_name = $1 AND c.client_type = $2) OR c.logins = CAST($3 AS bigint))',
    );
  });

  it('lets parentheses override precedence', () => {
    expect(c(`(client_name = 'a' or client_type = 'b') and logins = 1`).sql).toBe(
      '((c.client_name = $1 OR c.client_type = $2) AND c.logins = CAST($3 AS bigint))',
    );
    expect(c(`((((client_name = 'a'))))`)).toEqual({ sql: 'c.client_name = $1', params: ['a'] });
  });

  it('flattens chains of the same operator', () => {
    expect(c(`client_name = 'a' or client_name = 'b' or client_name = 'c'`).sql).toBe(
      '(c.client_name = $1 OR c.client_name = $2 OR c.client_name = $3)',
    );
  });

  it('binds not tighter than and, and allows it to repeat', () => {
    expect(c(`not client_name = 'a' and logins = 1`).sql).toBe(
      '(NOT (c.client_name = $1) AND c.logins = CAST($2 AS bigint))',
    );
    expect(c(`not (client_name = 'a' and logins = 1)`).sql).toBe(
      'NOT (c.client_name = $1 AND c.logins = CAST($2 AS bigint))',
    );
    expect(c(`not not is_public = true`).sql).toBe('NOT (NOT (c.is_public = CAST($1 AS boolean)))');
  });

  it('treats keywords case-insensitively', () => {
    expect(c(`client_name = 'a' OR client_name = 'b' AnD NOT tenant_id Is Not NuLL`).sql).toBe(
      '(c.client_name = $1 OR (c.client_name = $2 AND NOT (c.tenant_id IS NOT NULL)))',
    );
    expect(c('is_public = TRUE').params).toEqual([true]);
  });

  it('returns TRUE with no parameters for an empty or blank q', () => {
    expect(c('')).toEqual({ sql: 'TRUE', params: [] });
    expect(c(' \t\r\n ')).toEqual({ sql: 'TRUE', params: [] });
  });

  it('numbers parameters after paramOffset', () => {
    expect(c(`client_name = 'a' and logins in (1, 2)`, 'v1', 3)).toEqual({
      sql: '(c.client_name = $4 AND c.logins IN (CAST($5 AS bigint), CAST($6 AS bigint)))',
      params: ['a', '1', '2'],
    });
    expect(() => c(`client_name = 'a'`, 'v1', -1)).toThrow(TypeError);
  });
});

describe('compileWhere: string literals', () => {
  it("unescapes '' to a quote and keeps everything else verbatim", () => {
    expect(c(`client_name = 'O''Brien'`).params).toEqual(["O'Brien"]);
    expect(c(`client_name = ''''`).params).toEqual(["'"]);
    expect(c(`client_name = ''`).params).toEqual(['']);
    expect(c(`client_name = 'a "b" -- c /* d */ ; e'`).params).toEqual(['a "b" -- c /* d */ ; e']);
    expect(c(`client_name = 'Ünïcödé 😀 \u200f\u200b'`).params).toEqual(['Ünïcödé 😀 \u200f\u200b']);
  });

  it('rejects text PostgreSQL cannot store: NUL and unpaired surrogates', () => {
    expect(rejection(() => c(`client_name = 'a\u0000b'`)).message).toMatch(/NUL character/);
    expect(rejection(() => c(`client_name = 'a\ud800b'`)).message).toMatch(/unpaired surrogate/);
    expect(rejection(() => c(`client_name = '\udc00'`)).message).toMatch(/unpaired surrogate/);
  });
});

describe('compileWhere: type checks', () => {
  it.each([
    [`id = 'abc'`, /id expects a quoted UUID, got 'abc'/],
    [`id = 5`, /id expects a quoted UUID/],
    [`created_at > 'not-a-date'`, /created_at expects an ISO 8601 date-time string/],
    [`created_at > '2024-02-30'`, /created_at expects a valid date-time/],
    [`created_at > '2023-02-29'`, /valid date-time/],
    [`created_at > '2024-01-01T24:00:00Z'`, /valid date-time/],
    [`created_at > '0000-01-01'`, /valid date-time/],
    [`created_at > '2024-01-01T00:00:00+16:00'`, /valid date-time/],
    [`created_at > 20240101`, /ISO 8601/],
    [`logins = 1.5`, /logins expects an integer, got 1\.5/],
    [`logins = 'many'`, /logins expects an integer/],
    [`logins = 99999999999999999999`, /out of range/],
    [`score = 'abc'`, /score expects a number/],
    [`score = 1${'0'.repeat(60)}`, /too long/],
    [`client_name = 5`, /client_name expects a quoted string, got 5/],
    [`client_name = true`, /quoted string/],
    [`is_public = 'yes'`, /is_public expects true or false/],
    [`is_public < true`, /does not apply to boolean/],
    [`metadata = 'x'`, /is an object: compare a key inside it/],
    [`metadata in ('x')`, /is an object/],
    [`metadata like 'x'`, /is an object/],
    [`client_name.first = 'x'`, /'client_name' is not an object/],
  ])('%s is a 400', (q, message) => {
    expect(rejection(() => c(q)).message).toMatch(message);
  });

  it('accepts the largest and smallest 64-bit integers', () => {
    expect(c('logins > -9223372036854775808').params).toEqual(['-9223372036854775808']);
    expect(c('logins < 9223372036854775807').params).toEqual(['9223372036854775807']);
    expect(rejection(() => c('logins < 9223372036854775808')).message).toMatch(/out of range/);
  });

  it('rejects attributes that are not filterable or unknown, naming them and the position', () => {
    expect(rejection(() => c(`client_secret = 'x'`)).message).toBe(
      "Invalid q at position 1: attribute 'client_secret' cannot be used in q",
    );
    const e = rejection(() => c(`client_name = 'a' and colour = 'red'`));
    expect(e.message).toBe("Invalid q at position 23: unknown attribute 'colour' for client");
    expect(e.details).toEqual([{ field: 'q', message: "unknown attribute 'colour' for client" }]);
    expect(rejection(() => c(`Client_Name = 'a'`)).message).toMatch(/unknown attribute 'Client_Name'/);
  });
});

describe('compileWhere: json attributes', () => {
  it('reaches into metadata with a parameterized path', () => {
    expect(c(`metadata.tags = 'x'`)).toEqual({
      sql: '(c.metadata #>> CAST($1 AS text[])) = $2',
      params: [['tags'], 'x'],
    });
    expect(c(`client_metadata.refresh_token.expiration_enabled = true`)).toEqual({
      sql: '(c.client_metadata #> CAST($1 AS text[])) = CAST($2 AS jsonb)',
      params: [['refresh_token', 'expiration_enabled'], 'true'],
    });
    expect(c(`client_metadata.grant_types.0 like 'client%'`)).toEqual({
      sql: '(c.client_metadata #>> CAST($1 AS text[])) LIKE $2',
      params: [['grant_types', '0'], 'client%'],
    });
  });

  it('compares numbers inside metadata numerically, never casting non-numbers', () => {
    expect(c(`client_metadata.refresh_token.expiration_lifetime >= 3600`)).toEqual({
      sql:
        "(CASE WHEN jsonb_typeof((c.client_metadata #> CAST($1 AS text[]))) = 'number' " +
        'THEN CAST((c.client_metadata #>> CAST($1 AS text[])) AS numeric) END) >= CAST($2 AS numeric)',
      params: [['refresh_token', 'expiration_lifetime'], '3600'],
    });
  });

  it('handles null checks and in lists on paths', () => {
    expect(c(`metadata.owner is null`)).toEqual({
      sql: '(c.metadata #>> CAST($1 AS text[])) IS NULL',
      params: [['owner']],
    });
    expect(c(`metadata.owner = null`).sql).toBe('(c.metadata #>> CAST($1 AS text[])) IS NULL');
    expect(c(`metadata.kind not in ('a', 'b')`)).toEqual({
      sql: 'NOT ((c.metadata #>> CAST($1 AS text[])) = $2 OR (c.metadata #>> CAST($3 AS text[])) = $4)',
      params: [['kind'], 'a', ['kind'], 'b'],
    });
    expect(rejection(() => c(`metadata.flag > true`)).message).toMatch(/does not apply to true\/false/);
  });

  it('maps camelCase path keys of structured metadata under v2, never those of opaque metadata', () => {
    expect(c(`clientMetadata.grantTypes.0 = 'x'`, 'v2').params).toEqual([['grant_types', '0'], 'x']);
    expect(c(`client_metadata.grant_types.0 = 'x'`, 'v2').params).toEqual([['grant_types', '0'], 'x']);
    expect(c(`metadata.someKey = 'x'`, 'v2').params).toEqual([['someKey'], 'x']);
    expect(c(`metadata.someKey = 'x'`, 'v1').params).toEqual([['someKey'], 'x']);
  });
});

describe('compileWhere: names per presentation', () => {
  it('accepts only v1 names under v1', () => {
    expect(rejection(() => c(`clientName = 'a'`, 'v1')).message).toMatch(/unknown attribute 'clientName'/);
  });

  it('accepts v2 (camelCase) and v1 names under v2', () => {
    expect(c(`clientName = 'a' and created_at > '2024-01-01'`, 'v2').sql).toBe(
      '(c.client_name = $1 AND c.created_at > CAST($2 AS timestamptz))',
    );
    expect(c(`isPublic = true`, 'v2').sql).toBe('c.is_public = CAST($1 AS boolean)');
  });
});

describe('compileWhere: syntax errors name the position', () => {
  it.each([
    [
      `client_name`,
      "Invalid q at position 12: expected an operator (= != <> < <= > >= LIKE ILIKE IN IS) after 'client_name', found the end of q",
    ],
    [`client_name = `, 'Invalid q at position 15: expected a value, found the end of q'],
    [
      `client_name = x`,
      "Invalid q at position 15: expected a value, found 'x' (strings are written in single quotes: 'x')",
    ],
    [`client_name = "x"`, "Invalid q at position 15: unexpected character '\"'"],
    [
      `(client_name = 'a'`,
      "Invalid q at position 19: expected ')' to close the '(' at position 1, found the end of q",
    ],
    [`client_name = 'a')`, "Invalid q at position 18: unexpected ')' (unbalanced parentheses)"],
    [
      `client_name = 'a' client_type = 'b'`,
      "Invalid q at position 19: unexpected 'client_type' (expected AND, OR or the end of q)",
    ],
    [
      `client_name = 'abc`,
      'Invalid q at position 15: unterminated string (a quote inside a string is written twice)',
    ],
    [`()`, 'Invalid q at position 2: empty parentheses'],
    [`and`, 'Invalid q at position 1: expected an attribute name, found keyword AND'],
    [`client_name = 'a' and`, 'Invalid q at position 22: expected a condition, found the end of q'],
    [`client_name ! 'a'`, "Invalid q at position 13: unexpected '!' (did you mean '!='?)"],
    [`logins = 1.`, 'Invalid q at position 11: a decimal point must be followed by digits'],
    [`logins = 12abc`, 'Invalid q at position 10: malformed number 12a'],
    [`metadata. = 'a'`, 'Invalid q at position 9: a dot in a name must be followed by a key'],
    [`client_name == 'a'`, "Invalid q at position 14: expected a value, found '='"],
    [`client_name = 'a' -- x`, 'Invalid q at position 19: comments are not allowed'],
  ])('%s', (q, message) => {
    expect(rejection(() => c(q)).message).toBe(message);
  });

  it('rejects q over 2,000 characters and accepts exactly 2,000', () => {
    const base = `client_name = 'a'`;
    const exact = base + ' '.repeat(2000 - base.length);
    expect(c(exact).sql).toBe('c.client_name = $1');
    expect(rejection(() => c(exact + ' ')).message).toBe('Invalid q: longer than 2000 characters');
  });

  it('limits nesting to 64 levels of parentheses or not', () => {
    const nest = (n: number) => '('.repeat(n) + `client_name = 'a'` + ')'.repeat(n);
    expect(c(nest(64)).sql).toBe('c.client_name = $1');
    expect(rejection(() => c(nest(65))).message).toBe(
      'Invalid q at position 65: nesting deeper than 64 levels',
    );
    expect(c('not '.repeat(64) + 'is_public = true').sql).toMatch(/^(NOT \(){64}c\.is_public/);
    expect(rejection(() => c('not '.repeat(65) + 'is_public = true')).message).toMatch(
      /nesting deeper than 64/,
    );
  });

  it('rejects a q that is not a string', () => {
    expect(rejection(() => compileWhere(['a'] as unknown as string, clients)).message).toBe(
      'Invalid q: must be a string',
    );
  });
});
