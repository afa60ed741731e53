/**
 * Integration: compiled where clauses run against a real PostgreSQL, on a temporary table inside a
 * transaction that is rolled back. Proves the SQL is valid, the casts are right, and values of the
 * wrong shape inside jsonb never raise a PostgreSQL error.
 */
import pg from 'pg';
import {
  compileWhere,
  limitOffsetClause,
  orderByClause,
  parseListQuery,
  takePage,
  toEnvelope,
} from '../src/index.js';
import { clients, randomQuery, rng } from './fixtures.js';

const url = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const ID = [
  '10000000-0000-4000-8000-000000000001',
  '10000000-0000-4000-8000-000000000002',
  '10000000-0000-4000-8000-000000000003',
  '10000000-0000-4000-8000-000000000004',
];
const T1 = '20000000-0000-4000-8000-000000000001';

let client: pg.Client;

beforeAll(async () => {
  client = new pg.Client({ connectionString: url, application_name: 'gatehouse-query-spec' });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`
    CREATE TEMP TABLE query_spec_clients (
      id uuid PRIMARY KEY,
      client_name text NOT NULL,
      client_type varchar(20),
      client_description text,
      is_public boolean,
      tenant_id uuid,
      logins integer,
      score double precision,
      created_at timestamptz,
      client_metadata jsonb,
      metadata jsonb,
      client_secret text
    ) ON COMMIT DROP`);
  const rows: unknown[][] = [
    [
      ID[0],
      'Alpha',
      'spa',
      "O'Brien's app",
      true,
      null,
      5,
      1.5,
      '2024-01-01T00:00:00Z',
      {
        grant_types: ['client_credentials'],
        refresh_token: { expiration_enabled: true, expiration_lifetime: 3600 },
      },
      { tags: 'red', someKey: 'v', count: 10 },
    ],
    [
      ID[1],
      'beta',
      'native',
      null,
      false,
      T1,
      0,
      -2,
      '2024-06-15T12:00:00Z',
      {
        grant_types: ['authorization_code', 'refresh_token'],
        refresh_token: { expiration_enabled: false, expiration_lifetime: 'n/a' },
      },
      { tags: ['a', 'b'], count: '10' },
    ],
    [ID[2], 'Gamma 😀', 'web', '100%_done', true, T1, 2147483647, 1e10, '2025-01-01T00:00:00Z', null, null],
    [ID[3], "x' or '1'='1", 'spa', 'x', null, null, 1, 0, '2023-01-01T00:00:00Z', {}, null],
  ];
  for (const r of rows) {
    await client.query(
      `INSERT INTO query_spec_clients (id, client_name, client_type, client_description, is_public, tenant_id,
         logins, score, created_at, client_metadata, metadata) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
      r.map((v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : v)),
    );
  }
});

afterAll(async () => {
  await client?.query('ROLLBACK');
  await client?.end();
});

async function ids(q: string, version: 'v1' | 'v2' = 'v1'): Promise<string[]> {
  const { sql, params } = compileWhere(q, clients, { version });
  const res = await client.query(`SELECT c.id FROM query_spec_clients c WHERE ${sql} ORDER BY c.id`, params);
  return res.rows.map((r: { id: string }) => ID.indexOf(r.id) + 1).map(String);
}

describe('compiled q on PostgreSQL', () => {
  it.each([
    [`client_name = 'Alpha'`, ['1']],
    [`client_name ilike 'a%'`, ['1']],
    [`client_name like '%😀'`, ['3']],
    [`client_description like '100\\%\\_%'`, ['3']],
    [`client_description = 'O''Brien''s app'`, ['1']],
    [`client_name = 'x'' or ''1''=''1'`, ['4']],
    [`name_lower = 'alpha'`, ['1']],
    [`client_type in ('spa', 'web')`, ['1', '3', '4']],
    [`logins > 2147483647`, []],
    [`logins = 9223372036854775807`, []],
    [`logins >= 2147483647`, ['3']],
    [`score > 1`, ['1', '3']],
    [`score < -1.999999`, ['2']],
    [`created_at >= '2024-06-15T12:00:00Z'`, ['2', '3']],
    [`created_at < '2024-06-15T14:00:00+02:00'`, ['1', '4']],
    [`created_at > '2024-12-31'`, ['3']],
    [`is_public = true`, ['1', '3']],
    [`is_public != true`, ['2']],
    [`is_public is null`, ['4']],
    [`tenant_id is null`, ['1', '4']],
    [`tenant_id = '${T1.toUpperCase()}'`, ['2', '3']],
    [`id in ('${ID[0]}', '${ID[2]}')`, ['1', '3']],
    [`id not in ('${ID[0]}')`, ['2', '3', '4']],
    [`not (client_name = 'Alpha' or logins = 0)`, ['3', '4']],
    [`metadata.tags = 'red'`, ['1']],
    [`metadata.count = 10`, ['1']],
    [`metadata.count = '10'`, ['1', '2']],
    [`metadata.count in (10, 'zz')`, ['1']],
    [`metadata.tags.1 = 'b'`, ['2']],
    [`metadata.missing is null`, ['1', '2', '3', '4']],
    [`metadata is null`, ['3', '4']],
    [`metadata.someKey like 'v%'`, ['1']],
    [`client_metadata.refresh_token.expiration_lifetime > 100`, ['1']],
    [`client_metadata.refresh_token.expiration_lifetime = 'n/a'`, ['2']],
    [`client_metadata.refresh_token.expiration_enabled = false`, ['2']],
    [`client_metadata.refresh_token.expiration_enabled != false`, ['1']],
    [`client_metadata.grant_types.0 = 'client_credentials'`, ['1']],
  ])('%s', async (q, expected) => {
    expect(await ids(q)).toEqual(expected);
  });

  it('resolves v2 names, including camelCase keys of structured metadata', async () => {
    expect(await ids(`clientMetadata.refreshToken.expirationEnabled = true`, 'v2')).toEqual(['1']);
    expect(await ids(`isPublic = false or createdAt < '2023-06-01'`, 'v2')).toEqual(['2', '4']);
  });

  it('composes with the caller own parameters, sort and paging', async () => {
    const lq = parseListQuery(
      { q: 'score >= 0', sort: 'score:desc', limit: '2', total_count: 'true' },
      clients,
      'v1',
      { paramOffset: 1 },
    );
    const where = `c.client_type <> $1 AND ${lq.where!.sql}`;
    const res = await client.query(
      `SELECT c.id, c.score FROM query_spec_clients c WHERE ${where} ${orderByClause(lq.sort)} ${limitOffsetClause(lq, { plusOne: true })}`,
      ['native', ...lq.where!.params],
    );
    const page = takePage(res.rows, lq.limit);
    expect(page.items.map((r: { id: string }) => r.id)).toEqual([ID[2], ID[0]]);
    expect(toEnvelope(page.items, { ...lq, total: 3, hasMore: page.hasMore }, 'v1')).toMatchObject({
      total_count: 3,
      count: 2,
      has_more: true,
      limit: 2,
      offset: 0,
    });
  });

  it('runs 1,500 random grammar-built queries without a single PostgreSQL error', async () => {
    const r = rng(1234);
    let compiled = 0;
    for (let i = 0; i < 1500; i++) {
      const q = randomQuery(r);
      let where: { sql: string; params: unknown[] };
      try {
        where = compileWhere(q, clients, { version: i % 2 ? 'v2' : 'v1' });
      } catch {
        continue; // Rejected inputs are covered by the fuzz spec.
      }
      compiled++;
      await client.query('SAVEPOINT q');
      try {
        await client.query(`SELECT count(*) FROM query_spec_clients c WHERE ${where.sql}`, where.params);
      } catch (e) {
        throw new Error(
          `PostgreSQL rejected q ${JSON.stringify(q)} -> ${where.sql}: ${(e as Error).message}`,
        );
      } finally {
        await client.query('ROLLBACK TO SAVEPOINT q');
      }
    }
    expect(compiled).toBeGreaterThan(700);
  });
});
