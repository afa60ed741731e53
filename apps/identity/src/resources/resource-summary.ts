import { type Timestamp } from '@gatehouse/db';
import type { AppMetadataEntry } from '@gatehouse/identity-data';
import type { ApiVersion } from '../common/version.js';

/**
 * A resource row and the summary other records embed (`resource_data`), apart from the resource record itself:
 * the client-access records embed summaries, and the resource record embeds client-access records, so the two
 * must not import each other.
 */

import type { ResourceRow } from '@gatehouse/identity-data';

export type { ResourceRow };

/** Document 1's `resource_metadata` (the canonical form; v2 nests it differently). */
export interface ResourceMetadata {
  is_system: boolean;
  identifier_url: string | null;
  signing_algorithm: string;
  /** Only on single-record answers of an HS256 resource. */
  signing_secret?: string | null;
  token_lifetime: number;
  rbac_enabled: boolean;
  scopes_added: boolean;
  skip_consent_for_first_party: boolean;
}

/** Summary of a resource embedded in other records (`resource_data`); never carries the signing secret. */
export interface ResourceSummary {
  id: string;
  resource_type: string;
  resource_name: string;
  resource_description: string | null;
  resource_metadata: ResourceMetadata;
  app_metadata: AppMetadataEntry[];
  created_date: Timestamp;
  updated_date: Timestamp;
}

export function resourceMetadata(row: ResourceRow, secret?: string | null): ResourceMetadata {
  return {
    is_system: row.is_system,
    identifier_url: row.identifier_url,
    signing_algorithm: row.signing_algorithm,
    ...(secret !== undefined ? { signing_secret: secret } : {}),
    token_lifetime: row.token_lifetime,
    rbac_enabled: row.rbac_enabled,
    scopes_added: row.scopes_added,
    skip_consent_for_first_party: row.skip_consent_for_first_party,
  };
}

export function resourceSummary(row: ResourceRow): ResourceSummary {
  return {
    id: row.id,
    resource_type: row.resource_type,
    resource_name: row.resource_name,
    resource_description: row.resource_description,
    resource_metadata: resourceMetadata(row),
    app_metadata: row.app_metadata,
    created_date: row.created_date,
    updated_date: row.updated_date,
  };
}

/**
 * Document 2's `resource_metadata`: `api` {identifier_url, expiration_lifetime, is_system}, `token`
 * {expiration_lifetime, signing_algorithm, signing_secret}, `skip_consent_for_first_party`. Both lifetimes are the
 * access-token lifetime of the resource (`token_lifetime` of document 1).
 */
export function resourceMetadataV2(md: ResourceMetadata) {
  return {
    api: {
      identifier_url: md.identifier_url,
      expiration_lifetime: md.token_lifetime,
      is_system: md.is_system,
    },
    token: {
      expiration_lifetime: md.token_lifetime,
      signing_algorithm: md.signing_algorithm,
      ...(md.signing_secret !== undefined ? { signing_secret: md.signing_secret } : {}),
    },
    skip_consent_for_first_party: md.skip_consent_for_first_party,
  };
}

export function shapeResourceSummary(v: ApiVersion, s: ResourceSummary): Record<string, unknown> {
  return v === 'v1' ? { ...s } : { ...s, resource_metadata: resourceMetadataV2(s.resource_metadata) };
}
