// @gatehouse/sdk: typed clients of the three Gatehouse services, generated from their served OpenAPI documents
// (openapi-typescript types, openapi-fetch calls), with token helpers and the typed error object.
export {
  MANAGEMENT_AUDIENCE,
  TREE_AUDIENCE,
  bearerMiddleware,
  createGatehouse,
  type Gatehouse,
  type GatehouseOptions,
  type TokenRequest,
  type TokenSource,
} from './client.js';
export {
  GatehouseError,
  toApiError,
  unwrap,
  type ApiError,
  type ErrorCode,
  type ErrorDetail,
  type FetchResult,
  type OAuthErrorCode,
} from './errors.js';
export type { Client } from 'openapi-fetch';
export type {
  paths as AuthPaths,
  components as AuthComponents,
  operations as AuthOperations,
} from './generated/auth.js';
export type {
  paths as IdentityPaths,
  components as IdentityComponents,
  operations as IdentityOperations,
} from './generated/identity.js';
export type {
  paths as TreePaths,
  components as TreeComponents,
  operations as TreeOperations,
} from './generated/tree.js';
