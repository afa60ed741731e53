/**
 * Property test with a fixed seed: random inputs built from grammar fragments (and mutations of
 * well-formed queries) either compile to SQL whose placeholders match the params and whose text holds
 * nothing from the input, or throw DomainError invalid_request. Nothing else may be thrown.
 */
import { DomainError, ErrorCode } from '@gatehouse/errors';
import { clients, pick, placeholdersMatch, randomQuery, rng, unsafeSqlPart } from '../test/fixtures.js';
import { compileWhere } from './compile.js';

const FRAGMENTS = [
  'client_name',
  'clientName',
  'logins',
  'score',
  'id',
  'is_public',
  'created_at',
  'metadata',
  'metadata.tags',
  'client_metadata.grant_types',
  'client_secret',
  'unknown',
  '=',
  '!=',
  '<>',
  '<',
  '<=',
  '>',
  '>=',
  '!',
  'and',
  'OR',
  'not',
  'like',
  'ilike',
  'in',
  'is',
  'null',
  'true',
  'false',
  '(',
  ')',
  ',',
  "'a'",
  "'O''Brien'",
  "'",
  "''",
  "'6f1c2b7e-0d4a-4f6e-9c1b-2a3d4e5f6a7b'",
  "'2024-01-01'",
  "'x\\'",
  '1',
  '-1',
  '1.5',
  '-',
  '.',
  '--',
  '/*',
  ';',
  '"',
  '$1',
  '::',
  '\u0000',
  '\u200b',
  '\u200f',
  '\ud800',
  '😀',
  '\t',
  '\n',
];

const ODD_CHARS = ["'", '(', ')', ' ', '\u0000', '\ud83d', '\\', '%', '-', '.', ',', '=', 'é', '0'];

function check(q: string, offset: number): 'ok' | 'rejected' {
  try {
    const { sql, params } = compileWhere(q, clients, {
      paramOffset: offset,
      version: offset % 2 ? 'v2' : 'v1',
    });
    if (!placeholdersMatch(sql, params.length, offset)) {
      throw new Error(`placeholders do not match ${params.length} params for ${JSON.stringify(q)}: ${sql}`);
    }
    const unsafe = unsafeSqlPart(
      sql,
      clients.attributes.map((a) => a.column),
    );
    if (unsafe !== undefined)
      throw new Error(`unexpected SQL text ${JSON.stringify(unsafe)} for ${JSON.stringify(q)}`);
    return 'ok';
  } catch (e) {
    if (
      !(e instanceof DomainError) ||
      e.code !== ErrorCode.InvalidRequest ||
      !e.message.startsWith('Invalid q')
    ) {
      throw new Error(`input ${JSON.stringify(q)} threw ${String(e)}`);
    }
    return 'rejected';
  }
}

describe('compileWhere: fuzz', () => {
  it('only ever throws DomainError for random fragment soup', () => {
    const r = rng(20261122);
    let ok = 0;
    for (let i = 0; i < 4000; i++) {
      const n = 1 + Math.floor(r() * 10);
      const parts = Array.from({ length: n }, () => pick(r, FRAGMENTS));
      const q = parts.join(r() < 0.7 ? ' ' : '');
      if (check(q, i % 4) === 'ok') ok++;
    }
    // The soup is mostly rejected, but some of it must compile, or the test exercises nothing.
    expect(ok).toBeGreaterThan(10);
  });

  it('only ever throws DomainError for grammar-built queries and their mutations', () => {
    const r = rng(42);
    let ok = 0;
    let rejected = 0;
    for (let i = 0; i < 3000; i++) {
      let q = randomQuery(r);
      if (i % 3 === 0) {
        // Mutate: insert, delete or replace one character.
        const at = Math.floor(r() * (q.length + 1));
        const mode = r();
        if (mode < 0.4) q = q.slice(0, at) + pick(r, ODD_CHARS) + q.slice(at);
        else if (mode < 0.7) q = q.slice(0, at) + q.slice(at + 1);
        else q = q.slice(0, at) + pick(r, ODD_CHARS) + q.slice(at + 1);
      }
      if (check(q, i % 3) === 'ok') ok++;
      else rejected++;
    }
    expect(ok).toBeGreaterThan(1000);
    expect(rejected).toBeGreaterThan(100);
  });

  it('only ever throws DomainError for random code units', () => {
    const r = rng(7);
    for (let i = 0; i < 2000; i++) {
      const n = Math.floor(r() * 40);
      const q = Array.from({ length: n }, () => String.fromCharCode(Math.floor(r() * 0x10000))).join('');
      check(q, 0);
    }
  });
});
