import { Presenter } from '@gatehouse/query';
import type { ApiVersion } from '../common/version.js';
import {
  clientPermissionSpecs,
  shapeClientPermission,
  type ClientPermissionRecord,
} from './client-permission.record.js';
import {
  clientResourceSpecs,
  shapeClientResource,
  type ClientResourceRecord,
} from './client-resource.record.js';
import {
  resourceClientSpecs,
  shapeResourceClient,
  type ResourceClientRecord,
} from './resource-client.record.js';

const both = <T>(make: (v: ApiVersion) => Presenter<T>): Record<ApiVersion, Presenter<T>> => ({
  v1: make('v1'),
  v2: make('v2'),
});

export const clientResourcePresenters = both<ClientResourceRecord>(
  (v) => new Presenter(v, clientResourceSpecs[v], shapeClientResource(v)),
);
export const clientPermissionPresenters = both<ClientPermissionRecord>(
  (v) => new Presenter(v, clientPermissionSpecs[v], shapeClientPermission(v)),
);
export const resourceClientPresenters = both<ResourceClientRecord>(
  (v) => new Presenter(v, resourceClientSpecs[v], shapeResourceClient(v)),
);
