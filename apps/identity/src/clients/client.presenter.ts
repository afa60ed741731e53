import type { Type } from '@nestjs/common';
import { Presenter } from '@gatehouse/query';
import type { ApiVersion } from '../common/version.js';
import { clientSpecs, shapeClient, type ClientRecord } from './client.record.js';
import type { ClientInput } from './clients.service.js';
import {
  CreateClientV1Dto,
  CreateClientV2Dto,
  UpdateClientV1Dto,
  UpdateClientV2Dto,
} from './dto/client.dto.js';

export const clientPresenters: Record<ApiVersion, Presenter<ClientRecord>> = {
  v1: new Presenter('v1', clientSpecs.v1, shapeClient('v1')),
  v2: new Presenter('v2', clientSpecs.v2, shapeClient('v2')),
};

/** The bodies of each presentation, as its DTO classes validate them. */
export interface ClientBodies {
  v1: { create: CreateClientV1Dto; update: UpdateClientV1Dto };
  v2: { create: CreateClientV2Dto; update: UpdateClientV2Dto };
}

/** A create body, or a modify body (every field optional there, whatever the DTO class declares). */
export type ClientBody<V extends ApiVersion> = ClientBodies[V]['create'] | Partial<ClientBodies[V]['update']>;

/** A v1 body is already canonical. */
export const clientInputV1 = (body: ClientBody<'v1'>): ClientInput => ({ ...body });

/** A v2 body: `client_metadata.app_type` is the client type. */
export function clientInputV2(body: ClientBody<'v2'>): ClientInput {
  const { client_metadata, ...rest } = body;
  if (client_metadata === undefined || client_metadata === null) return { ...rest, client_metadata };
  const { app_type, ...metadata } = client_metadata as Record<string, unknown>;
  return {
    ...rest,
    client_metadata: metadata,
    ...(app_type !== undefined ? { client_type: app_type as string | null } : {}),
  };
}

/** Per presentation: the body DTOs (validated by `@ValidBody`) and the body's mapping to the service's input. */
export const clientBodies: {
  [V in ApiVersion]: {
    create: Type<ClientBodies[V]['create']>;
    update: Type<ClientBodies[V]['update']>;
    input: (body: ClientBody<V>) => ClientInput;
  };
} = {
  v1: { create: CreateClientV1Dto, update: UpdateClientV1Dto, input: clientInputV1 },
  v2: { create: CreateClientV2Dto, update: UpdateClientV2Dto, input: clientInputV2 },
};
