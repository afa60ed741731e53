import { Presenter } from '@gatehouse/query';
import type { ApiVersion } from '../common/version.js';
import { clientSpecs, shapeClient, type ClientRecord } from './client.record.js';
import type { ClientInput } from './clients.service.js';
import type {
  CreateClientV1Dto,
  CreateClientV2Dto,
  UpdateClientV1Dto,
  UpdateClientV2Dto,
} from './dto/client.dto.js';

export const clientPresenters: Record<ApiVersion, Presenter<ClientRecord>> = {
  v1: new Presenter('v1', clientSpecs.v1, shapeClient('v1')),
  v2: new Presenter('v2', clientSpecs.v2, shapeClient('v2')),
};

/** A v1 body is already canonical. */
export const clientInputV1 = (body: object): ClientInput => ({
  ...(body as CreateClientV1Dto | UpdateClientV1Dto),
});

/** A v2 body: `client_metadata.app_type` is the client type. */
export function clientInputV2(body: object): ClientInput {
  const { client_metadata, ...rest } = body as CreateClientV2Dto | UpdateClientV2Dto;
  if (client_metadata === undefined || client_metadata === null) return { ...rest, client_metadata };
  const { app_type, ...metadata } = client_metadata as Record<string, unknown>;
  return {
    ...rest,
    client_metadata: metadata,
    ...(app_type !== undefined ? { client_type: app_type as string | null } : {}),
  };
}
