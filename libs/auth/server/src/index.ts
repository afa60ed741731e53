// The token server (OAuth 2.0 / OpenID Connect, oidc-provider behind Nest): its service definition, which apps/auth's
// entry points run, and what the tests of other projects boot it with (its env schema, schema, TokenServer).
export { authService } from './auth.service-definition.js';
export { authEnv } from './config.js';
export { authEntities } from './entities.js';
export { authMigrations } from './migrations/index.js';
export { rotateSigningKeys } from './keys/rotate.js';
export { TokenServer } from './token-server.js';
export { SecondFactors, ACR_MFA, ACR_PWD } from './mfa/second-factors.js';
export { totpCode, totpStep } from './mfa/totp.js';
