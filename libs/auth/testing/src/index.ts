// The real token server for the tests of other projects (identity, tree): started in-process or in its own OS
// process, and proxies to put in front of it. Test files only (eslint allows it there, not in an app's src).
export {
  spawnTokenServer,
  startTokenServer,
  type InstanceClient,
  type TokenServer,
  type TokenServerOptions,
} from './token-server.js';
export { CountingProxy, SwitchableProxy, TcpProxy } from './proxies.js';
// The token server's own class, for tests that look inside the running server (its cache, its change feed).
export { TokenServer as TokenServerApp } from '@gatehouse/token-server';
// TOTP codes of a secret (RFC 6238 as the token server checks them), for tests that sign in with a second factor.
export { totpCode, totpStep } from '@gatehouse/token-server';
