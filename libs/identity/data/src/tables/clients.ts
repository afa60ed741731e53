import { iso, Params, ScopedTable, type RecordScope, type Sql, type Timestamp } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';
import type { AppMetadataEntry } from '../entities/audit.js';
import type { ClientMetadata } from '../entities/client.entity.js';

/** The `clients` table (alias `c`): rows of an instance, each of at most one tenant. */
export const clientsTable = new ScopedTable({ name: 'clients', alias: 'c', tenantScoped: true });

/** A clients row as CLIENT_COLUMNS reads it (timestamps as ISO text; the secret's ciphertext only where asked). */
export interface ClientRow {
  id: string;
  instance_id: string;
  tenant_id: string | null;
  client_type: string | null;
  client_name: string;
  client_secret_expires_at: Timestamp | null;
  client_description: string | null;
  client_metadata: ClientMetadata;
  app_metadata: AppMetadataEntry[];
  is_public: boolean;
  is_first_party: boolean;
  is_global: boolean;
  is_default: boolean;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

export type ClientRowWithSecret = ClientRow & { client_secret_enc: string | null };
export type ClientRowWithCounts = ClientRow & { agg_resources?: number; agg_permissions?: number };

/** Columns of a clients row (alias `c`); the secret's ciphertext is read only where a secret is answered. */
export const CLIENT_COLUMNS = `c.id, c.instance_id, c.tenant_id, c.client_type, c.client_name,
  ${iso('c.client_secret_expires_at')} AS client_secret_expires_at, c.client_description, c.client_metadata,
  c.app_metadata, c.is_public, c.is_first_party, c.is_global, c.is_default, c.created_by,
  ${iso('c.created_at')} AS created_at, c.updated_by, ${iso('c.updated_at')} AS updated_at`;

/** The counts of a client's `aggregations` (alias `c`). */
export const CLIENT_AGGREGATION_COLUMNS = `(SELECT count(*) FROM client_resources x WHERE x.client_id = c.id)::int AS agg_resources,
  (SELECT count(*) FROM client_permissions x WHERE x.client_id = c.id)::int AS agg_permissions`;

/**
 * The client `id` in the caller's scope, or 404 (unknown, another instance's, or another tenant's for a restricted
 * caller). `lock` takes a row lock for the rest of the transaction.
 */
export async function findClient(
  db: Sql,
  scope: RecordScope,
  id: string,
  opts: { lock?: boolean; aggregations?: boolean } = {},
): Promise<ClientRowWithSecret & ClientRowWithCounts> {
  const p = new Params([id]);
  const [row] = await db.rows<ClientRowWithSecret & ClientRowWithCounts>(
    `SELECT ${CLIENT_COLUMNS}, c.client_secret_enc${opts.aggregations ? `, ${CLIENT_AGGREGATION_COLUMNS}` : ''}
       FROM ${clientsTable.from}
      WHERE c.id = $1 AND ${clientsTable.where(scope, p)}
      ${opts.lock ? 'FOR UPDATE OF c' : ''}`,
    p.values,
  );
  if (!row) throw notFound(`Client ${id} not found`);
  return row;
}

/** The clients among `ids` in the caller's scope; 404 naming those that are not. */
export async function findClients(db: Sql, scope: RecordScope, ids: string[]): Promise<ClientRow[]> {
  const p = new Params([ids]);
  const found = await db.rows<ClientRow>(
    `SELECT ${CLIENT_COLUMNS} FROM ${clientsTable.from} WHERE c.id = ANY($1::uuid[]) AND ${clientsTable.where(scope, p)}`,
    p.values,
  );
  const missing = ids.filter((id) => !found.some((c) => c.id === id));
  if (missing.length)
    throw notFound(`Client${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')}`);
  return found;
}
