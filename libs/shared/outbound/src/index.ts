export {
  classifyAddress,
  addressBytes,
  parseCidr,
  inCidr,
  type AddressClass,
  type Cidr,
} from './addresses.js';
export {
  Allowlist,
  OutboundPolicy,
  OutboundRefused,
  systemResolver,
  bareHost,
  type ResolvedAddress,
  type Resolver,
} from './policy.js';
export {
  OutboundFetcher,
  OutboundError,
  DEFAULT_LIMITS,
  type OutboundLimits,
  type OutboundResponse,
} from './fetcher.js';
export {
  outboundEnv,
  outboundAllowlistEnv,
  outboundPolicyFromEnv,
  outboundFetcherFromEnv,
  type OutboundEnv,
} from './env.js';
