import type { IdentityProviderRow } from '@gatehouse/identity-data';
import { auditAttributes, defineVersionedRecord } from '../common/records.js';
import type { ApiVersion } from '../common/version.js';

/** A tenant identity provider as answered: its row, plus `client_secret` in the create answer only. */
export type IdentityProviderRecord = IdentityProviderRow & { client_secret?: string | null };

export const identityProviderSpecs = defineVersionedRecord({
  name: 'identity_provider',
  attributes: [
    { name: 'id', column: 'tip.id', type: 'uuid' },
    { name: 'instance_id', column: 'tip.instance_id', type: 'uuid' },
    { name: 'tenant_id', column: 'tip.tenant_id', type: 'uuid' },
    { name: 'identity_provider', column: 'tip.identity_provider', type: 'string' },
    { name: 'name', column: 'tip.name', sortColumn: 'lower(tip.name)', type: 'string' },
    { name: 'issuer', column: 'tip.issuer', type: 'string' },
    { name: 'client_id', column: 'tip.client_id', type: 'string' },
    { name: 'jwks_uri', column: 'tip.jwks_uri', type: 'string' },
    { name: 'enabled', column: 'tip.enabled', type: 'boolean' },
    ...auditAttributes('tip'),
  ],
  children: { v1: [], v2: [] },
  extraFields: [{ name: 'client_secret' }],
});

/** One shape in both presentations (neither seed gives one; the envelope differs, the record does not). */
export const shapeIdentityProvider = (_v: ApiVersion) => (r: IdentityProviderRecord) =>
  ({ ...r }) as Record<string, unknown>;
