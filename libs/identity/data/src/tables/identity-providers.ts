import { column, Params, Table, type FullRowOf, type RecordScope, type RowOf, type Sql } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';

/**
 * The `tenant_identity_providers` table (alias `tip`): rows of an instance, each of exactly one tenant. Its columns,
 * declared once: IdentityProviderRow, IDENTITY_PROVIDER_COLUMNS, the list spec's attributes and the record
 * (apps/identity identity-provider.record.ts) derive from them.
 */
export const identityProvidersTable = new Table({
  name: 'tenant_identity_providers',
  alias: 'tip',
  tenantScoped: true,
  columns: {
    id: column.uuid(),
    instance_id: column.uuid(),
    tenant_id: column.uuid(),
    identity_provider: column.text(),
    name: column.text(),
    issuer: column.text(),
    client_id: column.text(),
    jwks_uri: column.text().nullable(),
    enabled: column.boolean(),
    created_by: column.uuid().nullable(),
    created_at: column.timestamp(),
    updated_by: column.uuid().nullable(),
    updated_at: column.timestamp(),
    /** The sealed client secret: read only by token exchange (trustedIdentityProviders). */
    client_secret_enc: column.text().nullable().hiddenColumn(),
  },
});

/** A tenant_identity_providers row as IDENTITY_PROVIDER_COLUMNS reads it (never the sealed secret). */
export type IdentityProviderRow = RowOf<typeof identityProvidersTable.columns>;

export const IDENTITY_PROVIDER_COLUMNS = identityProvidersTable.select;

/** Unique constraints of the table and what a 409 says about them. */
export const IDENTITY_PROVIDER_CONFLICTS = {
  uq_tenant_identity_providers_issuer: 'The tenant already has an identity provider with this issuer',
};

/** The identity provider `id` of tenant `tenantId` in the caller's scope, or 404. */
export async function findIdentityProvider(
  db: Sql,
  scope: RecordScope,
  tenantId: string,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<IdentityProviderRow> {
  const p = new Params([id, tenantId]);
  const [row] = await db.rows<IdentityProviderRow>(
    `SELECT ${IDENTITY_PROVIDER_COLUMNS} FROM ${identityProvidersTable.from}
      WHERE tip.id = $1 AND tip.tenant_id = $2 AND ${identityProvidersTable.where(scope, p)}${opts.lock ? ' FOR UPDATE OF tip' : ''}`,
    p.values,
  );
  if (!row) throw notFound(`Identity provider ${id} of tenant ${tenantId} not found`);
  return row;
}

/** An identity provider as token exchange uses it: with its sealed client secret. */
export type TrustedIdentityProvider = IdentityProviderRow &
  Pick<FullRowOf<typeof identityProvidersTable.columns>, 'client_secret_enc'>;

/**
 * The enabled identity providers whose issuer is `issuer` (a trailing `/` aside) that a client may use: those of
 * its tenant, or for a client without a tenant (`tenantId` null) those of every tenant of its instance, oldest
 * first.
 */
export async function trustedIdentityProviders(
  db: Sql,
  instanceId: string,
  tenantId: string | null,
  issuer: string,
): Promise<TrustedIdentityProvider[]> {
  const p = new Params([issuer.replace(/\/+$/, '')]);
  const scope: RecordScope = { instanceId, restricted: tenantId !== null, tenantId };
  return db.rows<TrustedIdentityProvider>(
    `SELECT ${IDENTITY_PROVIDER_COLUMNS}, tip.client_secret_enc FROM ${identityProvidersTable.from}
      WHERE rtrim(tip.issuer, '/') = $1 AND tip.enabled AND ${identityProvidersTable.where(scope, p)}
      ORDER BY tip.created_at, tip.id`,
    p.values,
  );
}
