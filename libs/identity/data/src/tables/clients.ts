import { column, Params, Table, type FullRowOf, type RecordScope, type RowOf, type Sql } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';
import type { AppMetadataEntry } from '../entities/audit.js';
import type { ClientMetadata } from '../entities/client.entity.js';
import type { MfaPolicy } from '../entities/mfa-policy.js';

/**
 * The `clients` table (alias `c`): rows of an instance, each of at most one tenant. Its columns, declared once:
 * ClientRow, CLIENT_COLUMNS, the list spec's attributes and the record (apps/identity client.record.ts) derive
 * from them.
 */
export const clientsTable = new Table({
  name: 'clients',
  alias: 'c',
  tenantScoped: true,
  columns: {
    id: column.uuid(),
    instance_id: column.uuid(),
    tenant_id: column.uuid().nullable(),
    client_type: column.text().nullable(),
    client_name: column.text(),
    client_secret_expires_at: column.timestamp().nullable(),
    client_description: column.text().nullable(),
    client_metadata: column.json<ClientMetadata>(),
    app_metadata: column.json<AppMetadataEntry[]>(),
    is_public: column.boolean(),
    is_first_party: column.boolean(),
    is_global: column.boolean(),
    /** MFA policy (null: inherit the tenant's, then the instance's). */
    mfa: column.textOf<MfaPolicy>().nullable(),
    /** The instance's own client (cannot be deleted, nor made public, tenant-bound or not global). */
    is_default: column.boolean().internalColumn(),
    created_by: column.uuid().nullable(),
    created_at: column.timestamp(),
    updated_by: column.uuid().nullable(),
    updated_at: column.timestamp(),
    /** The sealed secret: read only where a secret is answered (or checked). */
    client_secret_enc: column.text().nullable().hiddenColumn(),
  },
});

/** A clients row as CLIENT_COLUMNS reads it (timestamps as ISO text; the secret's ciphertext only where asked). */
export type ClientRow = RowOf<typeof clientsTable.columns>;

export type ClientRowWithSecret = ClientRow &
  Pick<FullRowOf<typeof clientsTable.columns>, 'client_secret_enc'>;
export type ClientRowWithCounts = ClientRow & { agg_resources?: number; agg_permissions?: number };

/** Columns of a clients row (alias `c`); the secret's ciphertext is read only where a secret is answered. */
export const CLIENT_COLUMNS = clientsTable.select;

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
