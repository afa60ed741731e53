import { isUuid, type FullRowOf, type Sql } from '@gatehouse/db';
import { getMetadataArgsStorage } from 'typeorm';
import type { ClientMetadata } from './entities/client.entity.js';
import type { clientsTable } from './tables/clients.js';
import type { resourcesTable } from './tables/resources.js';
import { User } from './entities/user.entity.js';
import { sealedIn, type SecretBox } from './secret-box.js';

/** What the token server needs to know about a client (secret decrypted). */
export interface OidcClientRecord {
  id: string;
  instanceId: string;
  tenantId: string | null;
  clientName: string;
  clientType: string | null;
  /** Plaintext secret; null for a public client. */
  clientSecret: string | null;
  clientSecretExpiresAt: Date | null;
  grantTypes: string[];
  clientMetadata: ClientMetadata;
  isPublic: boolean;
  isFirstParty: boolean;
  isGlobal: boolean;
  isDefault: boolean;
  updatedAt: Date;
}

/**
 * The columns of a clients row the token server reads, by clientsTable's names (alias `c`). Its reads take them
 * as `pg` parses them (timestamps as Dates, not the ISO text of the management API's CLIENT_COLUMNS).
 */
const OIDC_CLIENT_COLUMNS = [
  'id',
  'instance_id',
  'tenant_id',
  'client_name',
  'client_type',
  'client_secret_enc',
  'client_secret_expires_at',
  'client_metadata',
  'is_public',
  'is_first_party',
  'is_global',
  'is_default',
  'updated_at',
] as const satisfies readonly (keyof typeof clientsTable.columns)[];

const OIDC_CLIENT_SELECT = OIDC_CLIENT_COLUMNS.map((c) => `c.${c}`).join(', ');

type ClientRow = Omit<
  Pick<FullRowOf<typeof clientsTable.columns>, (typeof OIDC_CLIENT_COLUMNS)[number]>,
  'client_secret_expires_at' | 'updated_at'
> & { client_secret_expires_at: Date | null; updated_at: Date };

/** A client row as the token server knows it; throws SecretBoxError when its secret cannot be opened. */
function toClient(r: ClientRow, box: SecretBox): OidcClientRecord {
  const metadata = r.client_metadata ?? {};
  return {
    id: r.id,
    instanceId: r.instance_id,
    tenantId: r.tenant_id,
    clientName: r.client_name,
    clientType: r.client_type,
    clientSecret: box.decryptNullable(r.client_secret_enc, sealedIn.clientSecret(r.id)),
    clientSecretExpiresAt: r.client_secret_expires_at,
    grantTypes: Array.isArray(metadata.grant_types)
      ? metadata.grant_types.filter((g) => typeof g === 'string')
      : [],
    clientMetadata: metadata,
    isPublic: r.is_public,
    isFirstParty: r.is_first_party,
    isGlobal: r.is_global,
    isDefault: r.is_default,
    updatedAt: r.updated_at,
  };
}

/** The client with this id and its decrypted secret, or null (unknown or malformed id). One primary-key look-up. */
export async function findClientForOidc(
  db: Sql,
  clientId: string,
  box: SecretBox,
): Promise<OidcClientRecord | null> {
  if (!isUuid(clientId)) return null;
  const [r] = await db.rows<ClientRow>(`SELECT ${OIDC_CLIENT_SELECT} FROM clients c WHERE c.id = $1`, [
    clientId,
  ]);
  return r ? toClient(r, box) : null;
}

/** A resource as the token server uses it (`resource_metadata` columns; signing secret decrypted when a box is given). */
export interface OidcResourceRecord {
  id: string;
  instanceId: string;
  tenantId: string | null;
  resourceName: string;
  identifierUrl: string;
  isSystem: boolean;
  signingAlgorithm: string;
  /** Plaintext HS256 secret (only when a SecretBox was passed and the resource has one). */
  signingSecret: string | null;
  tokenLifetime: number;
  rbacEnabled: boolean;
  scopesAdded: boolean;
  skipConsentForFirstParty: boolean;
}

/**
 * A resources row as the token server reads it: the stored columns by the table module's names (`scopes_added`
 * the stored flag, not the management API's computed one; an audience always has its URL).
 */
type ResourceRow = Pick<
  FullRowOf<typeof resourcesTable.columns>,
  | 'id'
  | 'instance_id'
  | 'tenant_id'
  | 'resource_name'
  | 'is_system'
  | 'signing_algorithm'
  | 'signing_secret_enc'
  | 'token_lifetime'
  | 'rbac_enabled'
  | 'scopes_added'
  | 'skip_consent_for_first_party'
> & { identifier_url: string };

/** What a resources row holds besides its id, instance and tenant (which a joined read names `r_*`). */
type ResourceFields = Omit<ResourceRow, 'id' | 'instance_id' | 'tenant_id'>;

const RESOURCE_FIELDS = `r.resource_name, r.identifier_url, r.is_system, r.signing_algorithm, r.signing_secret_enc,
  r.token_lifetime, r.rbac_enabled, r.scopes_added, r.skip_consent_for_first_party`;

const RESOURCE_COLUMNS = `r.id, r.instance_id, r.tenant_id, ${RESOURCE_FIELDS}`;

function toResource(
  r: ResourceFields,
  id: string,
  instanceId: string,
  tenantId: string | null,
  box?: SecretBox,
): OidcResourceRecord {
  return {
    id,
    instanceId,
    tenantId,
    resourceName: r.resource_name,
    identifierUrl: r.identifier_url,
    isSystem: r.is_system,
    signingAlgorithm: r.signing_algorithm,
    signingSecret: box ? box.decryptNullable(r.signing_secret_enc, sealedIn.resourceSigningSecret(id)) : null,
    tokenLifetime: r.token_lifetime,
    rbacEnabled: r.rbac_enabled,
    scopesAdded: r.scopes_added,
    skipConsentForFirstParty: r.skip_consent_for_first_party,
  };
}

/** The resource of an instance whose `identifier_url` (the token audience) is `url`, or null. */
export async function findResourceByIdentifier(
  db: Sql,
  instanceId: string,
  url: string,
  box?: SecretBox,
): Promise<OidcResourceRecord | null> {
  if (!isUuid(instanceId) || typeof url !== 'string') return null;
  const [r] = await db.rows<ResourceRow>(
    `SELECT ${RESOURCE_COLUMNS} FROM resources r WHERE r.instance_id = $1 AND r.identifier_url = $2`,
    [instanceId, url],
  );
  return r ? toResource(r, r.id, r.instance_id, r.tenant_id, box) : null;
}

/** True when the resource is authorized to the client (a client_resources row). */
export async function isAuthorized(db: Sql, clientId: string, resourceId: string): Promise<boolean> {
  if (!isUuid(clientId) || !isUuid(resourceId)) return false;
  const r = await db.rows(`SELECT 1 FROM client_resources WHERE client_id = $1 AND resource_id = $2`, [
    clientId,
    resourceId,
  ]);
  return r.length > 0;
}

/** Names of the scopes of `resourceId` granted to the client, sorted. */
export async function grantedScopes(db: Sql, clientId: string, resourceId: string): Promise<string[]> {
  if (!isUuid(clientId) || !isUuid(resourceId)) return [];
  const r = await db.rows<{ scope_name: string }>(
    `SELECT s.scope_name
       FROM client_permissions p JOIN scopes s ON s.id = p.scope_id
      WHERE p.client_id = $1 AND p.resource_id = $2
      ORDER BY s.scope_name`,
    [clientId, resourceId],
  );
  return r.map((x) => x.scope_name);
}

export interface ClientResourceAccess {
  resource: OidcResourceRecord;
  /** The resource is authorized to the client. */
  authorized: boolean;
  /** Scope names granted to the client on the resource, sorted (empty when none or not authorized). */
  scopes: string[];
}

/**
 * Everything a token request for (client, audience) needs, in one round trip: the resource of the client's instance
 * with that identifier, whether it is authorized to the client, and the granted scope names. Null when the client
 * or the resource does not exist.
 */
export async function clientResourceAccess(
  db: Sql,
  clientId: string,
  identifierUrl: string,
  box?: SecretBox,
): Promise<ClientResourceAccess | null> {
  if (!isUuid(clientId) || typeof identifierUrl !== 'string') return null;
  const [r] = await db.rows<ResourceRow & { authorized: boolean; scopes: string[] }>(
    `SELECT ${RESOURCE_COLUMNS},
            (cr.id IS NOT NULL) AS authorized,
            coalesce((SELECT array_agg(s.scope_name ORDER BY s.scope_name)
                        FROM client_permissions p JOIN scopes s ON s.id = p.scope_id
                       WHERE p.client_id = c.id AND p.resource_id = r.id), '{}') AS scopes
       FROM clients c
       JOIN resources r ON r.instance_id = c.instance_id AND r.identifier_url = $2
       LEFT JOIN client_resources cr ON cr.client_id = c.id AND cr.resource_id = r.id
      WHERE c.id = $1`,
    [clientId, identifierUrl],
  );
  if (!r) return null;
  return {
    resource: toResource(r, r.id, r.instance_id, r.tenant_id, box),
    authorized: r.authorized,
    scopes: r.authorized ? r.scopes : [],
  };
}

type ClientAndAccessRow = ClientRow &
  ResourceFields & {
    r_id: string | null;
    r_instance_id: string;
    r_tenant_id: string | null;
    authorized: boolean;
    scopes: string[];
  };

/**
 * findClientForOidc and clientResourceAccess as one statement, the token server's read for a token request and
 * /tokeninfo: the client (with its decrypted secret) and, when its instance has a resource `identifierUrl`, the
 * access to it. A client whose secret cannot be opened is left out (`onClientSecretError` is told) while its access
 * is still answered. `clientId` must be a UUID: the token server checks its client ids before any read.
 */
export async function clientAndResourceAccess(
  db: Sql,
  clientId: string,
  identifierUrl: string,
  box: SecretBox,
  onClientSecretError: (clientId: string, err: unknown) => void,
): Promise<{ client?: OidcClientRecord; access?: ClientResourceAccess }> {
  const [r] = await db.rows<ClientAndAccessRow>(
    `SELECT ${OIDC_CLIENT_SELECT},
            r.id AS r_id, r.instance_id AS r_instance_id, r.tenant_id AS r_tenant_id, ${RESOURCE_FIELDS},
            (cr.id IS NOT NULL) AS authorized,
            coalesce((SELECT array_agg(s.scope_name ORDER BY s.scope_name)
                        FROM client_permissions p JOIN scopes s ON s.id = p.scope_id
                       WHERE p.client_id = c.id AND p.resource_id = r.id), '{}') AS scopes
       FROM clients c
       LEFT JOIN resources r ON r.instance_id = c.instance_id AND r.identifier_url = $2
       LEFT JOIN client_resources cr ON cr.client_id = c.id AND cr.resource_id = r.id
      WHERE c.id = $1`,
    [clientId, identifierUrl],
  );
  if (!r) return {};
  let client: OidcClientRecord | undefined;
  try {
    client = toClient(r, box);
  } catch (err) {
    if ((err as Error).name !== 'SecretBoxError') throw err;
    onClientSecretError(clientId, err);
  }
  if (!r.r_id) return { client };
  const access: ClientResourceAccess = {
    resource: toResource(r, r.r_id, r.r_instance_id, r.r_tenant_id, box),
    authorized: r.authorized,
    scopes: r.authorized ? r.scopes : [],
  };
  return { client, access };
}

/** The `supported_locales` of the client's instance (document 2's instance_metadata); empty when unknown. */
export async function supportedLocalesOfClient(db: Sql, clientId: string): Promise<string[]> {
  if (!isUuid(clientId)) return [];
  const [r] = await db.rows<{ locales: unknown }>(
    `SELECT i.settings->'supported_locales' AS locales
       FROM clients c JOIN instances i ON i.id = c.instance_id WHERE c.id = $1`,
    [clientId],
  );
  return localeList(r?.locales);
}

/** The `supported_locales` of an instance (as supportedLocalesOfClient of one of its clients); empty when unknown. */
export async function instanceSupportedLocales(db: Sql, instanceId: string): Promise<string[]> {
  if (!isUuid(instanceId)) return [];
  const [r] = await db.rows<{ locales: unknown }>(
    `SELECT settings->'supported_locales' AS locales FROM instances WHERE id = $1`,
    [instanceId],
  );
  return localeList(r?.locales);
}

const localeList = (locales: unknown): string[] =>
  Array.isArray(locales) ? locales.filter((l): l is string => typeof l === 'string') : [];

/** Phone numbers compare without spaces, dashes, dots and parentheses (`+976 9911-2233` is `+97699112233`). */
export function normalizePhone(phone: string): string {
  return phone.replace(/[\s\-.()]/g, '');
}

const PHONE_LIKE = /^\+?[\d\s\-.()]{4,}$/;

/**
 * The user of an instance whose e-mail or user name (both case-insensitive) or phone number is `login`, or null.
 * Should two users match different fields, e-mail wins over user name over phone.
 */
export async function findUserByLogin(db: Sql, instanceId: string, login: string): Promise<User | null> {
  if (!isUuid(instanceId) || typeof login !== 'string') return null;
  const trimmed = login.trim();
  if (!trimmed || trimmed.length > 320) return null;
  const phone = PHONE_LIKE.test(trimmed) ? normalizePhone(trimmed) : null;
  const found = await db.rows<User>(
    `SELECT ${USER_ACCOUNT_COLUMNS} FROM users u
      WHERE u.instance_id = $1
        AND (lower(u.user_email) = lower($2) OR lower(u.user_name) = lower($2)${phone ? ' OR u.phone_number = $3' : ''})`,
    phone ? [instanceId, trimmed, phone] : [instanceId, trimmed],
  );
  if (found.length <= 1) return found[0] ?? null;
  const lower = trimmed.toLowerCase();
  const rank = (u: User) =>
    u.userEmail?.toLowerCase() === lower ? 0 : u.userName?.toLowerCase() === lower ? 1 : 2;
  return found.sort((a, b) => rank(a) - rank(b))[0];
}

/** A user by id, or null (a malformed id is no user). */
export async function findUserById(db: Sql, userId: string): Promise<User | null> {
  if (!isUuid(userId)) return null;
  return (
    (await db.one<User>(`SELECT ${USER_ACCOUNT_COLUMNS} FROM users u WHERE u.id = $1`, [userId])) ?? null
  );
}

/**
 * The columns of a users row (alias `u`) under the `User` entity's property names: the token server reads a user
 * as the entity declares it (timestamps as Date).
 */
const USER_ACCOUNT_COLUMNS = entityColumns(User, 'u');

/** What a token's account is made of: its claims (OpenID Connect's standard ones) and what decides its sign-in. */
export const ACCOUNT_USER_PROPERTIES = [
  'id',
  'instanceId',
  'tenantId',
  'isBlocked',
  'name',
  'givenName',
  'familyName',
  'middleName',
  'nickname',
  'userName',
  'picture',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
  'updatedAt',
  'userEmail',
  'emailVerified',
  'address',
  'phoneNumber',
  'phoneVerified',
] as const satisfies readonly (keyof User)[];

/** A user as the account of a token or a session (ACCOUNT_USER_PROPERTIES of the row, typed as the entity's). */
export type AccountUser = Pick<User, (typeof ACCOUNT_USER_PROPERTIES)[number]>;

const ACCOUNT_COLUMNS = entityColumns(User, 'u', ACCOUNT_USER_PROPERTIES);

/**
 * A user by id as the account of a token or a session, or null (a malformed id is no user): only the columns of
 * AccountUser. The token server looks the account up on every authorization and token request of a user; the
 * password hash, metadata and counters of the whole row are of no use there and cost their parsing each time.
 */
export async function findAccountUser(db: Sql, userId: string): Promise<AccountUser | null> {
  if (!isUuid(userId)) return null;
  return (
    (await db.one<AccountUser>(`SELECT ${ACCOUNT_COLUMNS} FROM users u WHERE u.id = $1`, [userId])) ?? null
  );
}

/**
 * `alias.column AS "property"` for every column the entity class declares (its decorators are the one list), or
 * for those of the properties `only`.
 */
export function entityColumns(
  entity: abstract new () => object,
  alias: string,
  only?: readonly string[],
): string {
  const columns = getMetadataArgsStorage()
    .columns.filter(
      (c) =>
        (c.target === entity ||
          (typeof c.target === 'function' &&
            entity.prototype instanceof (c.target as abstract new () => object))) &&
        (!only || only.includes(c.propertyName)),
    )
    .map((c) => {
      const column = c.options.name ?? c.propertyName;
      return column === c.propertyName ? `${alias}.${column}` : `${alias}.${column} AS "${c.propertyName}"`;
    });
  if (!columns.length) throw new Error(`${entity.name} declares no columns`);
  if (only && columns.length !== only.length)
    throw new Error(`${entity.name} does not declare every column of ${only.join(', ')}`);
  return columns.join(', ');
}
