/** Audience (identifier_url) of the management API (apps/identity). */
export const MANAGEMENT_AUDIENCE = 'urn:gatehouse:management';
/** Audience (identifier_url) of the tree API (apps/tree). */
export const TREE_AUDIENCE = 'urn:gatehouse:tree';

export interface SystemResourceSpec {
  identifierUrl: string;
  name: string;
  description: string;
  scopes: { name: string; description: string }[];
}

/** Scope that shows client secrets on reads (Auth0's `read:client_keys`); create and rotate answers need none. */
export const CLIENTS_READ_SECRETS = 'clients:read_secrets';
/** Scope that shows resource signing secrets on reads. */
export const RESOURCES_READ_SECRETS = 'resources:read_secrets';

/** Scope of the audit trail (`GET /logs`), also of the log streams' reads; read-only. */
export const LOGS_READ = 'logs:read';
/** Scope that creates, changes and deletes log streams (`/log-streams`; reading them takes LOGS_READ). */
export const LOG_STREAMS_WRITE_SCOPE = 'log_streams:write';

const MANAGEMENT_GROUPS = [
  'clients',
  'resources',
  'tenants',
  'roles',
  'users',
  'groups',
  'tickets',
  'instances',
];

/** The system resources seeded into every instance (`is_system: true`; they cannot be deleted). */
export const SYSTEM_RESOURCES: readonly SystemResourceSpec[] = [
  {
    identifierUrl: MANAGEMENT_AUDIENCE,
    name: 'Gatehouse management API',
    description: 'Identity management API (apps/identity)',
    scopes: [
      ...MANAGEMENT_GROUPS.flatMap((g) => [
        { name: `${g}:read`, description: `Read ${g}` },
        { name: `${g}:write`, description: `Create, modify and delete ${g}` },
      ]),
      // The audit trail is written by the actions it records, never through the API: no logs:write.
      {
        name: LOGS_READ,
        description: 'Read logs (the audit trail of sign-ins, tokens and changes) and log streams',
      },
      { name: LOG_STREAMS_WRITE_SCOPE, description: 'Create, modify and delete log streams' },
      {
        name: CLIENTS_READ_SECRETS,
        description: 'Read client secrets (GET of one client); only the default client has it by default',
      },
      {
        name: RESOURCES_READ_SECRETS,
        description:
          'Read resource signing secrets (GET of one resource); only the default client has it by default',
      },
    ],
  },
  {
    identifierUrl: TREE_AUDIENCE,
    name: 'Gatehouse tree API',
    description: 'Tree manager API (apps/tree)',
    scopes: [
      { name: 'trees:read', description: 'Read trees, versions, nodes and translations' },
      {
        name: 'trees:write',
        description: 'Create, modify and delete trees, versions, nodes and translations',
      },
      { name: 'settings:write', description: 'Modify tree manager settings' },
    ],
  },
];
