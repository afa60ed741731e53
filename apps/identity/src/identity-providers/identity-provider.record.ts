import { identityProvidersTable, type IdentityProviderRow } from '@gatehouse/identity-data';
import { defineVersionedRecord, type VersionedAttribute } from '../common/records.js';
import type { ApiVersion } from '../common/version.js';

/**
 * A tenant identity provider as answered: its row (every column of the table is a field of the record, so lists
 * and reads answer the rows themselves), plus `client_secret` in the create answer only.
 */
export type IdentityProviderRecord = IdentityProviderRow & { client_secret?: string | null };

/** The create answer: the record with `client_secret` after `client_id`. */
export function identityProviderRecord(
  row: IdentityProviderRow,
  secret: string | null,
): IdentityProviderRecord {
  return identityProvidersTable.record(row, 'client_id', { client_secret: secret });
}

export const identityProviderSpecs = defineVersionedRecord({
  name: 'identity_provider',
  attributes: identityProvidersTable.attributes<VersionedAttribute>({
    name: { sortColumn: 'lower(tip.name)' },
  }),
  children: { v1: [], v2: [] },
  extraFields: [{ name: 'client_secret' }],
});

/** One shape in both presentations (neither seed gives one; the envelope differs, the record does not). */
export const shapeIdentityProvider = (_v: ApiVersion) => (r: IdentityProviderRecord) =>
  ({ ...r }) as Record<string, unknown>;
