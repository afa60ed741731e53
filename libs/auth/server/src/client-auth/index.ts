/**
 * Client authentication outside oidc-provider, in one place: reading Basic and client_secret_post credentials
 * (basic.ts, credentials.ts) and checking a client's secret (authenticate.ts). oidc-provider authenticates the
 * clients of its own endpoints (token, revocation) itself; the paths of ours that answer before or beside it read
 * credentials here, each with the rules and the error answers it has always had.
 */
export * from './authenticate.js';
export * from './basic.js';
export * from './credentials.js';
