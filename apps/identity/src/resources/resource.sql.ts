/**
 * SQL fragments of resources (alias `r`). A leaf module: record specs of several features build on these strings
 * when their modules load, so they must not wait on any other module.
 */
import { SCOPES_ADDED } from '@gatehouse/identity-data';

/** `resource_metadata` of alias `r` as jsonb, for `q` filters (v1 and v2 shapes). */
export const MD_V1 = `jsonb_build_object('is_system', r.is_system, 'identifier_url', r.identifier_url,
  'signing_algorithm', r.signing_algorithm, 'token_lifetime', r.token_lifetime, 'rbac_enabled', r.rbac_enabled,
  'scopes_added', ${SCOPES_ADDED}, 'skip_consent_for_first_party', r.skip_consent_for_first_party)`;
export const MD_V2 = `jsonb_build_object('api', jsonb_build_object('identifier_url', r.identifier_url,
  'expiration_lifetime', r.token_lifetime, 'is_system', r.is_system), 'token', jsonb_build_object(
  'expiration_lifetime', r.token_lifetime, 'signing_algorithm', r.signing_algorithm),
  'skip_consent_for_first_party', r.skip_consent_for_first_party)`;

/** `resource_data` of alias `r` as jsonb (for `q`), in the shape of each presentation. */
export const resourceDataJson = (md: string) =>
  `jsonb_build_object('id', r.id, 'resource_type', r.resource_type, 'resource_name', r.resource_name,
    'resource_description', r.resource_description, 'resource_metadata', ${md}, 'app_metadata', r.app_metadata,
    'created_date', r.created_date, 'updated_date', r.updated_date)`;
