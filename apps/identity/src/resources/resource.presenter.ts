import type { Type } from '@nestjs/common';
import { invalidRequest } from '@gatehouse/errors';
import { Presenter } from '@gatehouse/query';
import type { ApiVersion } from '../common/version.js';
import { resourceSpecs, shapeResource, type ResourceRecord } from './resource.record.js';
import type { ResourceInput, ResourceMetadataInput } from './resources.service.js';
import {
  CreateResourceV1Dto,
  CreateResourceV2Dto,
  UpdateResourceV1Dto,
  UpdateResourceV2Dto,
  type ResourceMetadataV2Dto,
} from './dto/resource.dto.js';

export const resourcePresenters: Record<ApiVersion, Presenter<ResourceRecord>> = {
  v1: new Presenter('v1', resourceSpecs.v1, shapeResource('v1')),
  v2: new Presenter('v2', resourceSpecs.v2, shapeResource('v2')),
};

/** The bodies of each presentation, as its DTO classes validate them. */
export interface ResourceBodies {
  v1: { create: CreateResourceV1Dto; update: UpdateResourceV1Dto };
  v2: { create: CreateResourceV2Dto; update: UpdateResourceV2Dto };
}

/** A create body, or a modify body (every field optional there, whatever the DTO class declares). */
export type ResourceBody<V extends ApiVersion> =
  ResourceBodies[V]['create'] | Partial<ResourceBodies[V]['update']>;

/** A v1 body is already canonical. */
export const resourceInputV1 = (body: ResourceBody<'v1'>): ResourceInput => ({ ...body });

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

export function resourceInputV2(body: ResourceBody<'v2'>): ResourceInput {
  const { resource_metadata, ...rest } = body;
  return resource_metadata
    ? { ...rest, resource_metadata: resourceMetadataFromV2(resource_metadata) }
    : { ...rest };
}

/** Per presentation: the body DTOs (validated by `@ValidBody`) and the body's mapping to the service's input. */
export const resourceBodies: {
  [V in ApiVersion]: {
    create: Type<ResourceBodies[V]['create']>;
    update: Type<ResourceBodies[V]['update']>;
    input: (body: ResourceBody<V>) => ResourceInput;
  };
} = {
  v1: { create: CreateResourceV1Dto, update: UpdateResourceV1Dto, input: resourceInputV1 },
  v2: { create: CreateResourceV2Dto, update: UpdateResourceV2Dto, input: resourceInputV2 },
};
