import { invalidRequest } from '@gatehouse/errors';
import { Presenter } from '@gatehouse/query';
import type { ApiVersion } from '../common/version.js';
import { resourceSpecs, shapeResource, type ResourceRecord } from './resource.record.js';
import type { ResourceInput, ResourceMetadataInput } from './resources.service.js';
import type { CreateResourceV2Dto, ResourceMetadataV2Dto, UpdateResourceV2Dto } from './dto/resource.dto.js';

export const resourcePresenters: Record<ApiVersion, Presenter<ResourceRecord>> = {
  v1: new Presenter('v1', resourceSpecs.v1, shapeResource('v1')),
  v2: new Presenter('v2', resourceSpecs.v2, shapeResource('v2')),
};

export const resourceInputV1 = (body: object): ResourceInput => ({ ...(body as ResourceInput) });

/** Document 2's nested `resource_metadata` in canonical names; its two lifetimes must agree when both are given. */
export function resourceMetadataFromV2(md: ResourceMetadataV2Dto): ResourceMetadataInput {
  const api = md.api ?? {};
  const token = md.token ?? {};
  if (
    api.expiration_lifetime !== undefined &&
    token.expiration_lifetime !== undefined &&
    api.expiration_lifetime !== token.expiration_lifetime
  ) {
    throw invalidRequest(
      'resource_metadata.api.expiration_lifetime and resource_metadata.token.expiration_lifetime are the same ' +
        'access-token lifetime: give one, or equal values',
      [
        {
          field: 'resource_metadata.api.expiration_lifetime',
          message: 'differs from token.expiration_lifetime',
        },
      ],
    );
  }
  const out: ResourceMetadataInput = {
    is_system: api.is_system,
    identifier_url: api.identifier_url,
    signing_algorithm: token.signing_algorithm,
    signing_secret: token.signing_secret,
    token_lifetime: token.expiration_lifetime ?? api.expiration_lifetime,
    skip_consent_for_first_party: md.skip_consent_for_first_party,
  };
  for (const k of Object.keys(out) as (keyof ResourceMetadataInput)[])
    if (out[k] === undefined) delete out[k];
  return out;
}

export function resourceInputV2(body: object): ResourceInput {
  const { resource_metadata, ...rest } = body as CreateResourceV2Dto | UpdateResourceV2Dto;
  return resource_metadata
    ? { ...rest, resource_metadata: resourceMetadataFromV2(resource_metadata) }
    : { ...rest };
}
