/**
 * Hostile `q` inputs: each either compiles to exactly the expected parameterized SQL, or is a
 * DomainError invalid_request with the expected message. Nothing of the input reaches the SQL text.
 */
import { DomainError, ErrorCode } from '@gatehouse/errors';
import { clients, unsafeSqlPart } from '../test/fixtures.js';
import { compileWhere } from './compile.js';

type Outcome = { sql: string; params: unknown[] } | { error: string | RegExp };

const columns = clients.attributes.map((a) => a.column);

const cases: [string, string, Outcome][] = [
  // Classic injection attempts.
  [
    'tautology',
    `client_name = 'x' or 1=1 --`,
    { error: "Invalid q at position 22: expected an attribute name, found '1'" },
  ],
  [
    'stacked query',
    `client_name = 'x'; drop table clients`,
    { error: "Invalid q at position 18: unexpected character ';'" },
  ],
  [
    'block comment',
    `client_name = 'x' /* */`,
    { error: 'Invalid q at position 19: comments are not allowed' },
  ],
  [
    'comment glued to and',
    `client_name = 'a' AND/**/logins=1`,
    { error: 'Invalid q at position 22: comments are not allowed' },
  ],
  ['line comment', `client_name = 'a' --'`, { error: 'Invalid q at position 19: comments are not allowed' }],
  [
    'bare word value',
    `client_name = x`,
    { error: /position 15: expected a value, found 'x' \(strings are written in single quotes/ },
  ],
  [
    'quote breakout stays in the value',
    `client_name = 'x'' or ''1''=''1'`,
    { sql: 'c.client_name = $1', params: ["x' or '1'='1"] },
  ],
  [
    'backslash is no escape',
    `client_name = '\\' or 1=1 --'`,
    { error: "Invalid q at position 22: expected an attribute name, found '1'" },
  ],
  [
    'union',
    `client_name = 'a' union select * from users`,
    { error: "Invalid q at position 19: unexpected 'union' (expected AND, OR or the end of q)" },
  ],
  [
    'function call as name',
    `pg_sleep(10) = 1`,
    { error: /position 9: expected an operator .* after 'pg_sleep', found '\('/ },
  ],
  ['function call as value', `created_at > now()`, { error: /position 14: expected a value, found 'now'/ }],
  [
    'table-qualified column',
    `c.client_name = 'a'`,
    { error: "Invalid q at position 1: unknown attribute 'c' for client" },
  ],
  [
    'double-quoted identifier',
    `"client_name" = 'a'`,
    { error: `Invalid q at position 1: unexpected character '"'` },
  ],
  [
    'placeholder in input',
    `client_name = $1`,
    { error: "Invalid q at position 15: unexpected character '$'" },
  ],
  ['E-string', `client_name = E'\\x00'`, { error: /position 15: expected a value, found 'E'/ }],
  ['type cast', `client_name = 'x'::text`, { error: "Invalid q at position 18: unexpected character ':'" }],
  [
    'or true',
    `client_name = 'a' or true`,
    { error: 'Invalid q at position 22: expected an attribute name, found keyword TRUE' },
  ],
  ['escape clause', `client_name like '%' escape '!'`, { error: /position 22: unexpected 'escape'/ }],
  [
    'unknown attribute',
    `password = 'x'`,
    { error: "Invalid q at position 1: unknown attribute 'password' for client" },
  ],
  [
    'prototype names',
    `__proto__ = 'x' or constructor = 'y'`,
    { error: "Invalid q at position 1: unknown attribute '__proto__' for client" },
  ],
  ['hex number', `logins = 0x10`, { error: 'Invalid q at position 10: malformed number 0x' }],
  ['exponent number', `score = 1e309`, { error: 'Invalid q at position 9: malformed number 1e' }],
  ['spaced minus', `logins = - 1`, { error: "Invalid q at position 10: unexpected character '-'" }],
  ['double minus', `logins = --1`, { error: 'Invalid q at position 10: comments are not allowed' }],
  [
    'uuid that is not',
    `id = 'abc' or id = '1; drop'`,
    { error: "Invalid q at position 6: id expects a quoted UUID, got 'abc'" },
  ],
  [
    'json path injection',
    `metadata.a = 'x'`,
    { sql: '(c.metadata #>> CAST($1 AS text[])) = $2', params: [['a'], 'x'] },
  ],
  [
    'json path with odd key',
    `metadata.a}b = 'x'`,
    { error: "Invalid q at position 11: unexpected character '}'" },
  ],
  // Structure.
  [
    'unbalanced open',
    `((client_name = 'a')`,
    { error: "Invalid q at position 21: expected ')' to close the '(' at position 1, found the end of q" },
  ],
  [
    'unbalanced close',
    `client_name = 'a'))`,
    { error: "Invalid q at position 18: unexpected ')' (unbalanced parentheses)" },
  ],
  [
    'unterminated string',
    `client_name = 'abc`,
    { error: 'Invalid q at position 15: unterminated string (a quote inside a string is written twice)' },
  ],
  ['unterminated escaped quote', `client_name = 'abc''`, { error: /position 15: unterminated string/ }],
  [
    '10,000 characters',
    `client_name = '${'a'.repeat(9983)}'`,
    { error: 'Invalid q: longer than 2000 characters' },
  ],
  [
    '500-deep nesting',
    `${'('.repeat(500)}client_name = 'a'${')'.repeat(500)}`,
    { error: 'Invalid q at position 65: nesting deeper than 64 levels' },
  ],
  [
    '2,000 open parentheses',
    '('.repeat(2000),
    { error: 'Invalid q at position 65: nesting deeper than 64 levels' },
  ],
  [
    'whitespace between tokens',
    `client_name\t=\n'a'\r\nand\tlogins=1`,
    { sql: '(c.client_name = $1 AND c.logins = CAST($2 AS bigint))', params: ['a', '1'] },
  ],
  // Odd Unicode.
  [
    'RTL mark in a name',
    `client_name\u200f = 'a'`,
    { error: 'Invalid q at position 12: unexpected character U+200F' },
  ],
  [
    'RTL override in a value',
    `client_name = '\u202eabc'`,
    { sql: 'c.client_name = $1', params: ['\u202eabc'] },
  ],
  [
    'zero-width space between tokens',
    `client_name =\u200b'a'`,
    { error: 'Invalid q at position 14: unexpected character U+200B' },
  ],
  [
    'zero-width space in a value',
    `client_name = 'a\u200bb'`,
    { sql: 'c.client_name = $1', params: ['a\u200bb'] },
  ],
  [
    'BOM at start',
    `\ufeffclient_name = 'a'`,
    { error: 'Invalid q at position 1: unexpected character U+FEFF' },
  ],
  [
    'no-break space',
    `client_name\u00a0= 'a'`,
    { error: 'Invalid q at position 12: unexpected character U+00A0' },
  ],
  [
    'emoji as a value',
    `client_name = 😀`,
    { error: 'Invalid q at position 15: unexpected character U+1F600' },
  ],
  ['emoji in a value', `client_name = '😀🏳️‍🌈'`, { sql: 'c.client_name = $1', params: ['😀🏳️‍🌈'] }],
  [
    'fullwidth equals sign',
    `client_name ＝ 'a'`,
    { error: 'Invalid q at position 13: unexpected character U+FF1D' },
  ],
  [
    'fullwidth keyword',
    `client_name = 'a' ＯＲ logins = 1`,
    { error: 'Invalid q at position 19: unexpected character U+FF2F' },
  ],
  [
    'Cyrillic homoglyph in a name',
    `clіent_name = 'a'`,
    { error: 'Invalid q at position 3: unexpected character U+0456' },
  ],
  [
    'NUL outside a string',
    `client_name = 'a'\u0000`,
    { error: 'Invalid q at position 18: unexpected character U+0000' },
  ],
  [
    'NUL inside a string',
    `client_name = 'a\u0000'`,
    { error: 'Invalid q at position 15: the value for client_name contains a NUL character' },
  ],
  [
    'lone high surrogate outside',
    `client_name = 'a' \ud800`,
    { error: 'Invalid q at position 19: unexpected character U+D800' },
  ],
  [
    'lone low surrogate inside',
    `client_name = 'a\udc00'`,
    { error: /position 15: the value for client_name contains an unpaired surrogate/ },
  ],
  ['lone surrogate in a LIKE pattern', `client_name like '\ud83d%'`, { error: /unpaired surrogate/ }],
  [
    'control characters',
    `client_name = 'a'\u0007`,
    { error: 'Invalid q at position 18: unexpected character U+0007' },
  ],
];

describe('compileWhere: hostile inputs', () => {
  it.each(cases)('%s', (_label, q, outcome) => {
    let result: ReturnType<typeof compileWhere> | undefined;
    let error: unknown;
    try {
      result = compileWhere(q, clients);
    } catch (e) {
      error = e;
    }
    if ('error' in outcome) {
      expect(result).toBeUndefined();
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe(ErrorCode.InvalidRequest);
      if (typeof outcome.error === 'string') expect((error as DomainError).message).toBe(outcome.error);
      else expect((error as DomainError).message).toMatch(outcome.error);
      // Messages never carry raw control characters or very long echoes of the input.
      // eslint-disable-next-line no-control-regex
      expect((error as DomainError).message).not.toMatch(/[\u0000-\u001f\u200b-\u200f\ud800-\udfff]/);
      expect((error as DomainError).message.length).toBeLessThan(300);
    } else {
      expect(error).toBeUndefined();
      expect(result).toEqual(outcome);
      expect(unsafeSqlPart(result!.sql, columns)).toBeUndefined();
    }
  });
});
