import pg from 'pg';

const MAX_IDENTIFIER_BYTES = 63;

/** Validates a database name: 1-63 bytes, no NUL. Any other character is fine because names are always quoted. */
export function assertDatabaseName(name: string): void {
  if (typeof name !== 'string' || name.length === 0)
    throw new Error('database name must be a non-empty string');
  if (Buffer.byteLength(name, 'utf8') > MAX_IDENTIFIER_BYTES) {
    throw new Error(`database name must be at most ${MAX_IDENTIFIER_BYTES} bytes: ${JSON.stringify(name)}`);
  }
  if (name.includes('\0')) throw new Error('database name must not contain NUL');
}

/** `"name"` with embedded quotes doubled: a PostgreSQL identifier that is never interpreted as SQL. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Creates database `dbName` on the server of `adminUrl` unless it exists. Returns true when it was created.
 * Safe when several processes race to create the same name.
 */
export async function ensureDatabase(adminUrl: string, dbName: string): Promise<boolean> {
  assertDatabaseName(dbName);
  const client = new pg.Client({ connectionString: adminUrl, application_name: 'gatehouse-ensure-database' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName]);
    if ((found.rowCount ?? 0) > 0) return false;
    try {
      await client.query(`CREATE DATABASE ${quoteIdentifier(dbName)}`);
      return true;
    } catch (err) {
      // 42P04 duplicate_database; 23505 when two CREATE DATABASE statements race on pg_database's unique index.
      const code = (err as { code?: string }).code;
      if (code === '42P04' || code === '23505') return false;
      throw err;
    }
  } finally {
    await client.end();
  }
}
