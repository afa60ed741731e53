import type { DataSource } from 'typeorm';

/**
 * Resolves when the database answers `SELECT 1` within `timeoutMs` (default 2000); throws otherwise.
 * Meant for `/readyz`: never hangs on an exhausted pool or a server that stopped answering.
 */
export async function checkConnection(ds: DataSource, timeoutMs = 2000): Promise<void> {
  if (!ds.isInitialized) throw new Error('database connection is not initialized');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`database did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  const probe = ds.query('SELECT 1 AS ok') as Promise<{ ok: number }[]>;
  probe.catch(() => undefined); // a late failure after the timeout must not become an unhandled rejection
  try {
    const rows = await Promise.race([probe, timeout]);
    if (rows?.[0]?.ok !== 1) throw new Error('database gave an unexpected answer to SELECT 1');
  } finally {
    clearTimeout(timer);
  }
}
