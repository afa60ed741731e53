import { IdentitySchema1790000000000 } from './1790000000000-identity-schema.js';
import { OidcPayloadsAccount1790000100000 } from './1790000100000-oidc-payloads-account.js';
import { LoginFailures1790000200000 } from './1790000200000-login-failures.js';
import { RolesGroups1790000300000 } from './1790000300000-roles-groups.js';
import { OneTimeCodes1790000400000 } from './1790000400000-one-time-codes.js';
import { Tenants1790000500000 } from './1790000500000-tenants.js';
import { IdentityProviders1790000510000 } from './1790000510000-identity-providers.js';
import { Tickets1790000520000 } from './1790000520000-tickets.js';
import { Instances1790000530000 } from './1790000530000-instances.js';
import { TokenServerSpeed1790000600000 } from './1790000600000-token-server-speed.js';
import { CacheSubscribers1790000700000 } from './1790000700000-cache-subscribers.js';
import { AdminRoles1790000820000 } from './1790000820000-admin-roles.js';
import { OtpBudgets1790000830000 } from './1790000830000-otp-budgets.js';
import { DeliveryOutbox1795706191082 } from './1795706191082-delivery-outbox.js';
import { CacheSubscriberBackends1795706191083 } from './1795706191083-cache-subscriber-backends.js';
import { Events1795800000000 } from './1795800000000-events.js';
import { LogStreams1795800000100 } from './1795800000100-log-streams.js';
import { EventsListIndexes1795800000500 } from './1795800000500-events-list-indexes.js';
import { EventsAudit1795800100000 } from './1795800100000-events-audit.js';
import { EventsDropSeqIndex1795800200000 } from './1795800200000-events-drop-seq-index.js';
import { Mfa1795900000000 } from './1795900000000-mfa.js';
import { LogStreamScopes1795900100000 } from './1795900100000-log-stream-scopes.js';
import { AccountPhoneDevices1795900250000 } from './1795900250000-account-phone-devices.js';
import { AnnounceAuthenticators1795900300000 } from './1795900300000-announce-authenticators.js';
import { Passkeys1796000000000 } from './1796000000000-passkeys.js';

export {
  IdentitySchema1790000000000,
  OidcPayloadsAccount1790000100000,
  LoginFailures1790000200000,
  RolesGroups1790000300000,
  OneTimeCodes1790000400000,
  Tenants1790000500000,
  IdentityProviders1790000510000,
  Tickets1790000520000,
  Instances1790000530000,
  TokenServerSpeed1790000600000,
  CacheSubscribers1790000700000,
  AdminRoles1790000820000,
  OtpBudgets1790000830000,
  DeliveryOutbox1795706191082,
  CacheSubscriberBackends1795706191083,
};

/** Every migration of the identity data model, in order (apps/auth and apps/identity run the same list). */
export const identityMigrations = [
  IdentitySchema1790000000000,
  OidcPayloadsAccount1790000100000,
  LoginFailures1790000200000,
  RolesGroups1790000300000,
  OneTimeCodes1790000400000,
  Tenants1790000500000,
  IdentityProviders1790000510000,
  Tickets1790000520000,
  Instances1790000530000,
  TokenServerSpeed1790000600000,
  CacheSubscribers1790000700000,
  AdminRoles1790000820000,
  OtpBudgets1790000830000,
  DeliveryOutbox1795706191082,
  CacheSubscriberBackends1795706191083,
  Events1795800000000,
  LogStreams1795800000100,
  EventsListIndexes1795800000500,
  EventsAudit1795800100000,
  EventsDropSeqIndex1795800200000,
  Mfa1795900000000,
  LogStreamScopes1795900100000,
  AccountPhoneDevices1795900250000,
  AnnounceAuthenticators1795900300000,
  Passkeys1796000000000,
];
