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
export {
  clientCredentials,
  RefreshingTokens,
  type ClientCredentialsOptions,
  type RefreshingTokensOptions,
  type Tokens,
} from './tokens.js';
export {
  MAX_PAGE_SIZE,
  pageOfV1,
  pageOfV2,
  paginate,
  paginateV2,
  type EnvelopeV1,
  type EnvelopeV2,
  type Page,
  type PageOptions,
  type PageQueryV1,
  type PageQueryV2,
  type Paginator,
} from './pagination.js';
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
