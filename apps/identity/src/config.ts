import {
  authPort,
  authUrl,
  databaseUrl,
  env,
  identityPort,
  consolePort,
  consoleUrl,
  corsOrigins,
} from '@gatehouse/config';
import { bearerEnv } from '@gatehouse/bearer';
import { identityDataEnv } from '@gatehouse/identity-data';
import { deliveryEnv } from '@gatehouse/delivery';
import { outboundAllowlistEnv } from '@gatehouse/outbound';

export const identityEnv = {
  IDENTITY_PORT: identityPort,
  CORS_ORIGINS: corsOrigins,
  CONSOLE_PORT: consolePort,
  CONSOLE_URL: consoleUrl,
  DATABASE_URL: databaseUrl,
  AUTH_URL: authUrl,
  ...identityDataEnv,
  ...bearerEnv,
  MULTI_TENANT: env.bool({
    default: true,
    description:
      'multi-tenant mode: the tenant_id header of GET /resources narrows the list to that tenant; false: the header is ignored (instances.multi_tenant is not read)',
  }),
  MULTI_INSTANCE: env.bool({
    default: false,
    description:
      'multi-instance mode: the Instances operations (/api/v1|v2/instances) work; unset or false, they answer 501 not_implemented',
  }),
  // Tickets and invitations: their links are pages of the token server at its PUBLIC url, sent by e-mail.
  ISSUER: env.url({
    optional: true,
    description:
      "the token server's public URL (its ISSUER), the base of ticket and invitation links (default http://localhost:<AUTH_PORT>)",
  }),
  AUTH_PORT: authPort,
  EVENTS_RETENTION_DAYS: env.int({
    default: 90,
    min: 1,
    description:
      'days of events (the audit trail, docs/events.md) kept: whole days older are dropped hourly by one identity replica',
  }),
  ...deliveryEnv,
  // identity provider URLs are judged by the token server's outbound policy when they are configured
  ...outboundAllowlistEnv,
  LOG_STREAMS_DELIVERY: env.bool({
    default: true,
    description:
      'whether this replica delivers log streams (docs/events.md, "Streams"); every replica may: a stream is served by one at a time',
  }),
  LOG_STREAMS_POLL_MS: env.int({
    default: 1000,
    min: 10,
    max: 60000,
    description: 'how often a replica looks for log streams with events to deliver, in milliseconds',
  }),
  LOG_STREAMS_RETRY_BASE_MS: env.int({
    default: 1000,
    min: 10,
    max: 600000,
    description:
      'wait after the first failed delivery of a log stream, in milliseconds; doubled at each further failure (at most 10 minutes)',
  }),
  LOG_STREAMS_PAUSE_AFTER: env.int({
    default: 10,
    min: 1,
    max: 1000,
    description:
      'failed deliveries in a row after which a log stream is paused (its reason shown on the stream)',
  }),
  LOG_STREAMS_LEASE_MS: env.int({
    default: 30000,
    min: 500,
    max: 600000,
    description:
      'how long a replica holds a log stream while it delivers; another replica takes it over after that if the first died. Keep it above the 10 s delivery timeout',
  }),
};
