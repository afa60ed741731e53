import { embedChildren, wants, type ReadQuery, type ListRequest } from '@gatehouse/query';
import { Db, listPage, Params, type ListPage, type ListPlan, type Sql, withConflicts } from '@gatehouse/db';
import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { conflict, forbidden, invalidRequest } from '@gatehouse/errors';
import {
  CLIENTS_READ_SECRETS,
  SECRET_BOX,
  sealedIn,
  type AppMetadataEntry,
  type MfaPolicy,
  type SecretBox,
} from '@gatehouse/identity-data';
import { AccessCache, holds, type Access } from '../common/access.js';
import { assertTenant, assertTenantChange, tenantForNewRecord } from '../common/tenants.js';
import { permissionsOfClients, resourcesOfClients } from '../client-access/client-access.queries.js';
import { CLIENT_COLUMNS, clientRecord, type ClientRecord, type ClientRow } from './client.record.js';
import {
  CLIENT_AGGREGATION_COLUMNS,
  clientsTable,
  findClient,
  type ClientRowWithSecret,
} from '@gatehouse/identity-data';
import { clientProblem } from '@gatehouse/oidc-clients';

/** What create and modify take, in canonical names (v2 bodies are mapped to this by their presenter). */
export interface ClientInput {
  client_name?: string;
  client_type?: string | null;
  client_description?: string | null;
  /** On modify: given keys replace stored ones, null removes a key. */
  client_metadata?: object | null;
  app_metadata?: AppMetadataEntry[];
  is_public?: boolean;
  is_first_party?: boolean;
  is_global?: boolean;
  tenant_id?: string | null;
  /** MFA policy of sign-ins through the client (null: inherit). */
  mfa?: MfaPolicy | null;
  /** When the secret expires (ISO 8601 date-time in the future; null: never). Not with client_secret_lifetime. */
  client_secret_expires_at?: string | null;
  /** The same as seconds from now. */
  client_secret_lifetime?: number;
}

/** What change secret takes: when the new secret expires. */
export type SecretExpiryInput = Pick<ClientInput, 'client_secret_expires_at' | 'client_secret_lifetime'>;

const CONFLICTS = {
  ux_clients_name: 'A client with this client_name already exists in the tenant',
};

/**
 * A client that is not global is bound to a tenant: `is_global: false` needs a `tenant_id` (400 naming it), so no
 * tenant-bound client can stand for "every tenant-less record".
 */
function assertTenantOfRestricted(isGlobal: boolean, tenantId: string | null | undefined): void {
  if (!isGlobal && !tenantId) {
    throw invalidRequest('tenant_id: a client with is_global false needs a tenant_id', [
      { field: 'tenant_id', message: 'required when is_global is false' },
    ]);
  }
}

/** A date-time with a time zone (Z or an offset): a bare date or local time would depend on the server's zone. */
const DATE_TIME_WITH_ZONE = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/i;

/**
 * When a secret given `input` expires: undefined when the input names no expiry (keep what is stored, or none for
 * a new secret), null for never, else the instant. An instant that is not in the future, or both fields at once: 400
 * naming the field (an expired secret made on purpose would be a client that cannot authenticate).
 */
export function secretExpiryOf(input: SecretExpiryInput, now = Date.now()): Date | null | undefined {
  const at = input.client_secret_expires_at;
  const lifetime = input.client_secret_lifetime;
  if (at !== undefined && lifetime !== undefined) {
    throw invalidRequest(
      'client_secret_lifetime: give client_secret_expires_at or client_secret_lifetime, not both',
      [{ field: 'client_secret_lifetime', message: 'not with client_secret_expires_at' }],
    );
  }
  if (lifetime !== undefined) return new Date(now + lifetime * 1000);
  if (at === undefined || at === null) return at;
  const when = new Date(at);
  if (!DATE_TIME_WITH_ZONE.test(at) || Number.isNaN(when.getTime())) {
    throw invalidRequest('client_secret_expires_at must be an ISO 8601 date-time with a time zone', [
      { field: 'client_secret_expires_at', message: 'must be an ISO 8601 date-time with a time zone' },
    ]);
  }
  if (when.getTime() <= now) {
    throw invalidRequest('client_secret_expires_at must be in the future', [
      { field: 'client_secret_expires_at', message: 'must be in the future' },
    ]);
  }
  return when;
}

/** A public client has no secret, so nothing of it can expire: 400 naming the field given. */
function assertNoExpiryForPublic(input: SecretExpiryInput): void {
  for (const field of ['client_secret_expires_at', 'client_secret_lifetime'] as const) {
    if (input[field] !== undefined && input[field] !== null) {
      throw invalidRequest(`${field}: a public client has no secret`, [
        { field, message: 'a public client has no secret' },
      ]);
    }
  }
}

/**
 * A client as it is about to be stored must be one the token server accepts: its own mapping to oidc-provider's
 * client metadata, checked by oidc-provider's own validation (@gatehouse/oidc-clients). Otherwise 400 naming the field
 * (e.g. client_metadata.urls.callbacks for an http callback of an implicit client), nothing written.
 */
async function assertTokenServerAccepts(c: {
  id: string;
  instance_id: string;
  tenant_id: string | null;
  client_name: string;
  client_type: string | null;
  client_metadata: Record<string, unknown>;
  is_public: boolean;
  is_first_party: boolean;
  is_global: boolean;
}): Promise<void> {
  const grantTypes = Array.isArray(c.client_metadata.grant_types)
    ? c.client_metadata.grant_types.filter((g): g is string => typeof g === 'string')
    : [];
  const problem = await clientProblem({
    id: c.id,
    instanceId: c.instance_id,
    tenantId: c.tenant_id,
    clientName: c.client_name,
    clientType: c.client_type,
    clientSecret: null,
    clientSecretExpiresAt: null,
    grantTypes,
    clientMetadata: c.client_metadata,
    isPublic: c.is_public,
    isFirstParty: c.is_first_party,
    isGlobal: c.is_global,
  });
  if (problem) throw invalidRequest(problem.message, [problem]);
}

/** A new client secret: 256 random bits, base64url (43 characters). */
export const newClientSecret = () => randomBytes(32).toString('base64url');

/** Plain JSON (validated DTO instances become plain objects), keys with null or undefined values removed. */
function plainWithoutNulls(value: object | null | undefined): Record<string, unknown> {
  const plain = JSON.parse(JSON.stringify(value ?? {})) as Record<string, unknown>;
  for (const [k, v] of Object.entries(plain)) if (v === null) delete plain[k];
  return plain;
}

/** Shallow merge of a metadata patch: a given key replaces the stored one, a null removes it. */
export function mergeMetadata(stored: object, patch: object): Record<string, unknown> {
  const out: Record<string, unknown> = { ...stored };
  for (const [k, v] of Object.entries(JSON.parse(JSON.stringify(patch)) as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** The list statement of Get clients for this caller (exported for the benchmark's query plans). */
export function clientListPlan(access: Access, req: ListRequest): ListPlan {
  const params = new Params();
  return {
    ...req,
    select: (list) =>
      wants(list.fields, 'aggregations')
        ? `${CLIENT_COLUMNS}, ${CLIENT_AGGREGATION_COLUMNS}`
        : CLIENT_COLUMNS,
    from: clientsTable.from,
    conditions: clientsTable.conditions(access, params),
    params,
  };
}

/**
 * Clients of the caller's instance (and, for a caller that is not global, of its tenant only). Secrets are sealed
 * with the SecretBox and answered only on single-record operations. Every change is visible to the token server
 * from its next request (it reads the same rows, uncached).
 */
@Injectable()
export class ClientsService {
  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(AccessCache) private readonly callers: AccessCache,
  ) {}

  async list(access: Access, req: ListRequest): Promise<ListPage<ClientRecord>> {
    const page = await listPage<ClientRow & { agg_resources?: number; agg_permissions?: number }>(
      this.db,
      clientListPlan(access, req),
    );
    const records = page.rows.map((r) => this.withAggregations(clientRecord(r), r));
    await this.embedChildren(this.db, records, page.list);
    return { ...page, rows: records };
  }

  async get(access: Access, id: string, read: ReadQuery): Promise<ClientRecord> {
    return this.load(this.db, access, id, read);
  }

  async create(access: Access, input: ClientInput, read: ReadQuery): Promise<ClientRecord> {
    return this.db.transaction(async (m) => {
      assertTenantChange(access, input);
      const tenantId = await tenantForNewRecord(m, access, input.tenant_id);
      const isGlobal = access.restricted ? false : (input.is_global ?? true);
      assertTenantOfRestricted(isGlobal, tenantId);
      const isPublic = input.is_public ?? false;
      if (isPublic) assertNoExpiryForPublic(input);
      const secretExpiresAt = isPublic ? null : (secretExpiryOf(input) ?? null);
      const metadata = plainWithoutNulls(input.client_metadata);
      // A confidential client created without grant types may use client_credentials (what it is for).
      if (!isPublic && metadata.grant_types === undefined) metadata.grant_types = ['client_credentials'];
      const secret = isPublic ? null : newClientSecret();
      // the id is made here: the sealed secret is bound to it
      const id = randomUUID();
      await assertTokenServerAccepts({
        id,
        instance_id: access.instanceId,
        tenant_id: tenantId,
        client_name: input.client_name ?? '',
        client_type: input.client_type ?? null,
        client_metadata: metadata,
        is_public: isPublic,
        is_first_party: input.is_first_party ?? false,
        is_global: isGlobal,
      });
      const [row] = await withConflicts(CONFLICTS, () =>
        m.rows<{ id: string }>(
          `INSERT INTO clients (id, instance_id, tenant_id, client_name, client_type, client_description,
                                client_secret_enc, client_metadata, app_metadata, is_public, is_first_party,
                                is_global, created_by, updated_by, client_secret_expires_at, mfa)
           VALUES ($13, $1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11, $12, $12, $14, $15)
           RETURNING id`,
          [
            access.instanceId,
            tenantId,
            input.client_name,
            input.client_type ?? null,
            input.client_description ?? null,
            this.box.encryptNullable(secret, sealedIn.clientSecret(id)),
            JSON.stringify(metadata),
            JSON.stringify(input.app_metadata ?? []),
            isPublic,
            input.is_first_party ?? false,
            isGlobal,
            access.actor,
            id,
            secretExpiresAt,
            input.mfa ?? null,
          ],
        ),
      );
      // The new secret is shown once, in this answer.
      return this.load(m, access, row.id, read, true);
    });
  }

  async update(access: Access, id: string, input: ClientInput, read: ReadQuery): Promise<ClientRecord> {
    const updated = await this.db.transaction(async (m) => {
      const current = await findClient(m, access, id, { lock: true });
      assertTenantChange(access, input);
      if (current.is_default) {
        for (const key of ['is_public', 'is_global', 'tenant_id'] as const) {
          if (input[key] !== undefined && input[key] !== current[key]) {
            throw forbidden(`The default client's ${key} cannot be changed`);
          }
        }
      }
      if (input.tenant_id && input.tenant_id !== current.tenant_id)
        await assertTenant(m, access, input.tenant_id);

      assertTenantOfRestricted(
        input.is_global ?? current.is_global,
        input.tenant_id !== undefined ? input.tenant_id : current.tenant_id,
      );

      const isPublic = input.is_public ?? current.is_public;
      if (isPublic) assertNoExpiryForPublic(input);
      const expiry = secretExpiryOf(input);
      let secretEnc = current.client_secret_enc;
      let secretExpiresAt: Date | string | null =
        expiry !== undefined ? expiry : current.client_secret_expires_at;
      let newSecret = false;
      if (isPublic) {
        secretEnc = null;
        secretExpiresAt = null;
      } else if (!secretEnc) {
        secretEnc = this.box.encrypt(newClientSecret(), sealedIn.clientSecret(current.id));
        // a secret made by this change expires only as this change says
        secretExpiresAt = expiry ?? null;
        newSecret = true;
      }
      const metadata =
        input.client_metadata === undefined || input.client_metadata === null
          ? current.client_metadata
          : mergeMetadata(current.client_metadata ?? {}, input.client_metadata);
      // What the token server reads changes: the client as it will be must be one it accepts. (A change of
      // anything else leaves a client stored before this check as it is.)
      if (
        input.client_metadata !== undefined ||
        input.client_type !== undefined ||
        input.is_public !== undefined
      ) {
        await assertTokenServerAccepts({
          ...current,
          client_name: input.client_name ?? current.client_name,
          client_type: input.client_type !== undefined ? input.client_type : current.client_type,
          client_metadata: (metadata ?? {}) as Record<string, unknown>,
          is_public: isPublic,
          is_first_party: input.is_first_party ?? current.is_first_party,
          is_global: input.is_global ?? current.is_global,
          tenant_id: input.tenant_id !== undefined ? input.tenant_id : current.tenant_id,
        });
      }

      await withConflicts(CONFLICTS, () =>
        m.exec(
          `UPDATE clients SET client_name = $2, client_type = $3, client_description = $4, client_secret_enc = $5,
                  client_metadata = $6::jsonb, app_metadata = $7::jsonb, is_public = $8, is_first_party = $9,
                  is_global = $10, tenant_id = $11, updated_by = $12, updated_at = now(),
                  client_secret_expires_at = $13, mfa = $14
            WHERE id = $1`,
          [
            current.id,
            input.client_name ?? current.client_name,
            input.client_type !== undefined ? input.client_type : current.client_type,
            input.client_description !== undefined ? input.client_description : current.client_description,
            secretEnc,
            JSON.stringify(metadata ?? {}),
            JSON.stringify(input.app_metadata ?? current.app_metadata ?? []),
            isPublic,
            input.is_first_party ?? current.is_first_party,
            input.is_global ?? current.is_global,
            input.tenant_id !== undefined ? input.tenant_id : current.tenant_id,
            access.actor,
            secretExpiresAt,
            input.mfa !== undefined ? input.mfa : current.mfa,
          ],
        ),
      );
      // A secret generated by this change (a public client made confidential) is shown once, here.
      return this.load(m, access, current.id, read, newSecret);
    });
    // After the commit: a request of this client sees its new reach from now on (other replicas: the ChangeFeed).
    this.callers.forget(updated.id);
    return updated;
  }

  /** Deletes the client, its authorizations and permissions; its tokens are inactive at once. Default client: 403. */
  async remove(access: Access, id: string): Promise<void> {
    await this.db.transaction(async (m) => {
      const current = await findClient(m, access, id, { lock: true });
      if (current.is_default) throw forbidden('The default client cannot be deleted');
      await m.exec(`DELETE FROM clients WHERE id = $1`, [current.id]);
    });
    this.callers.forget(id);
  }

  /**
   * A new secret; the old one is refused by the token endpoint from now on. The new one expires as `expiry` says
   * (nothing given: never). A public client has none: 409.
   */
  async rotateSecret(
    access: Access,
    id: string,
    expiry: SecretExpiryInput,
    read: ReadQuery,
  ): Promise<ClientRecord> {
    const expiresAt = secretExpiryOf(expiry) ?? null;
    return this.db.transaction(async (m) => {
      const current = await findClient(m, access, id, { lock: true });
      if (current.is_public) throw conflict('A public client has no secret to change');
      await m.exec(
        `UPDATE clients SET client_secret_enc = $2, client_secret_expires_at = $4, updated_by = $3,
                updated_at = now()
          WHERE id = $1`,
        [
          current.id,
          this.box.encrypt(newClientSecret(), sealedIn.clientSecret(current.id)),
          access.actor,
          expiresAt,
        ],
      );
      return this.load(m, access, current.id, read, true);
    });
  }

  /**
   * One client with aggregations and (expanded) children as `read` asks, and its secret when `showSecret` (the
   * answer that made the secret) or the caller holds `clients:read_secrets`.
   */
  private async load(
    db: Sql,
    access: Access,
    id: string,
    read: ReadQuery,
    showSecret = false,
  ): Promise<ClientRecord> {
    const row = await findClient(db, access, id, { aggregations: wants(read.fields, 'aggregations') });
    const secret = showSecret || holds(access, CLIENTS_READ_SECRETS) ? this.openSecret(row) : undefined;
    const rec = this.withAggregations(clientRecord(row, secret), row);
    await this.embedChildren(db, [rec], read);
    return rec;
  }

  private openSecret(row: ClientRowWithSecret): string | null {
    try {
      return this.box.decryptNullable(row.client_secret_enc, sealedIn.clientSecret(row.id));
    } catch {
      // Sealed with a key this process does not have: the secret cannot be shown (rotate it).
      return null;
    }
  }

  private withAggregations(
    rec: ClientRecord,
    row: { agg_resources?: number; agg_permissions?: number },
  ): ClientRecord {
    if (row.agg_resources === undefined) return rec;
    rec.aggregations = {
      id: rec.id,
      client_id: rec.id,
      resources: row.agg_resources,
      permissions: row.agg_permissions ?? 0,
      created_by: rec.created_by,
      created_at: rec.created_at,
      updated_by: rec.updated_by,
      updated_at: rec.updated_at,
    };
    return rec;
  }

  private async embedChildren(db: Sql, records: ClientRecord[], read: ReadQuery): Promise<void> {
    if (!read.expand || !records.length) return;
    const ids = records.map((r) => r.id);
    // One after the other: inside a transaction both would share one connection anyway.
    const resources = wants(read.fields, 'resources') ? await resourcesOfClients(db, ids) : undefined;
    const permissions = wants(read.fields, 'permissions') ? await permissionsOfClients(db, ids) : undefined;
    if (resources) embedChildren(records, 'resources', resources);
    if (permissions) embedChildren(records, 'permissions', permissions);
  }
}
