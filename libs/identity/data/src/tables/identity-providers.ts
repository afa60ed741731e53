import { iso, Params, ScopedTable, type RecordScope, type Sql, type Timestamp } from '@gatehouse/db';
import { notFound } from '@gatehouse/errors';

/** The `tenant_identity_providers` table (alias `tip`): rows of an instance, each of exactly one tenant. */
export const identityProvidersTable = new ScopedTable({
  name: 'tenant_identity_providers',
  alias: 'tip',
  tenantScoped: true,
});

/** A tenant_identity_providers row as IDENTITY_PROVIDER_COLUMNS reads it (never the sealed secret). */
export interface IdentityProviderRow {
  id: string;
  instance_id: string;
  tenant_id: string;
  identity_provider: string;
  name: string;
  issuer: string;
  client_id: string;
  jwks_uri: string | null;
  enabled: boolean;
  created_by: string | null;
  created_at: Timestamp;
  updated_by: string | null;
  updated_at: Timestamp;
}

export const IDENTITY_PROVIDER_COLUMNS = `tip.id, tip.instance_id, tip.tenant_id, tip.identity_provider, tip.name,
  tip.issuer, tip.client_id, tip.jwks_uri, tip.enabled, tip.created_by, ${iso('tip.created_at')} AS created_at,
  tip.updated_by, ${iso('tip.updated_at')} AS updated_at`;

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
export type TrustedIdentityProvider = IdentityProviderRow & { client_secret_enc: string | null };

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
