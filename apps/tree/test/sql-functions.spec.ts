// The tree's PL/pgSQL and SQL functions as the migrations leave them, one file each in apps/tree/src/sql/ (the
// text PostgreSQL itself prints, pg_get_functiondef). Migrations are frozen text; this is where the current
// version of a function is read and reviewed. A change to a function is a new migration plus the regenerated file:
//   UPDATE_SQL=1 npm test -- -p tree --testPathPattern sql-functions
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { TestDatabase } from '@gatehouse/testing';
import { treeTestDatabase } from './support/db.js';

const sqlDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/sql');

describe('tree SQL functions (apps/tree/src/sql)', () => {
  let db: TestDatabase;
  let functions: Map<string, string>;

  beforeAll(async () => {
    db = await treeTestDatabase();
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      // Functions of the public schema that the migrations made (not an extension's, e.g. pgcrypto's).
      const { rows } = await c.query<{ file: string; def: string }>(
        `SELECT p.proname || CASE WHEN count(*) OVER (PARTITION BY p.proname) > 1
                                  THEN '(' || pg_get_function_identity_arguments(p.oid) || ')' ELSE '' END AS file,
                pg_get_functiondef(p.oid) AS def
           FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = 'public'
            AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
          ORDER BY 1`,
      );
      functions = new Map(rows.map((r) => [`${r.file}.sql`, `${r.def.trimEnd()}\n`]));
    } finally {
      await c.end();
    }
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('every function of the migrated database has its file, with the same text, and no file is left over', () => {
    expect(functions.size).toBeGreaterThanOrEqual(8);
    if (process.env.UPDATE_SQL === '1') {
      for (const f of readdirSync(sqlDir)) if (!functions.has(f)) writeFileSync(path.join(sqlDir, f), '');
      for (const [file, def] of functions) writeFileSync(path.join(sqlDir, file), def);
    }
    const files = readdirSync(sqlDir).filter((f) => f.endsWith('.sql'));
    expect(files.sort()).toEqual([...functions.keys()].sort());
    for (const [file, def] of functions) {
      expect({ file, def: readFileSync(path.join(sqlDir, file), 'utf8') }).toEqual({ file, def });
    }
  });
});
