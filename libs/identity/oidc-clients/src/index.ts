// Client metadata as the token server reads it: the mapping of an identity client to oidc-provider's client
// metadata (apps/auth loads clients through it) and oidc-provider's own validation of the result, configured as the
// token server's provider (apps/identity refuses a client the token server would refuse, naming the field).
export * from './client-metadata.js';
export * from './client-rules.js';
