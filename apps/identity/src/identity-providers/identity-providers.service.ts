import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Db, listPage, Params, withConflicts, type ListPage, type Sql } from '@gatehouse/db';
import { invalidRequest, notFound } from '@gatehouse/errors';
import { OutboundPolicy, OutboundRefused } from '@gatehouse/outbound';
import { SERVICE_ENV } from '@gatehouse/service';
import {
  findIdentityProvider,
  IDENTITY_PROVIDER_COLUMNS,
  IDENTITY_PROVIDER_CONFLICTS,
  identityProvidersTable,
  SECRET_BOX,
  sealedIn,
  tenantExists,
  type SecretBox,
} from '@gatehouse/identity-data';
import type { Access } from '../common/access.js';
import type { ListRequest } from '@gatehouse/query';
import { identityProviderRecord, type IdentityProviderRecord } from './identity-provider.record.js';

export interface IdentityProviderInput {
  identity_provider?: string;
  name?: string;
  issuer?: string;
  client_id?: string;
  client_secret?: string | null;
  jwks_uri?: string | null;
  enabled?: boolean;
}

/** An issuer is kept without trailing slashes (token exchange compares `iss` the same way). */
const normalIssuer = (issuer: string) => issuer.replace(/\/+$/, '');

/**
 * Tenant Identity Providers: the OIDC providers whose tokens token exchange accepts for a tenant. The client secret
 * is sealed with the SecretBox and answered only by the create operation. A caller that is not global reaches only
 * its own tenant (another tenant is 404, as an unknown one).
 */
@Injectable()
export class IdentityProvidersService {
  /** The token server's outbound policy (same OUTBOUND_ALLOWLIST), applied to URLs as they are configured. */
  private readonly outbound: OutboundPolicy;

  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(SERVICE_ENV) env: { OUTBOUND_ALLOWLIST?: string },
  ) {
    this.outbound = new OutboundPolicy({ allowlist: env.OUTBOUND_ALLOWLIST ?? '' });
  }

  /**
   * 400 naming the field for a URL the token server would refuse to fetch: not https, or a literal loopback,
   * private, link-local ... address or `localhost`, outside the allow-list. No DNS here: a name is resolved and its
   * addresses checked at every fetch (the answer may change, and only the one at fetch time matters).
   */
  private checkUrls(input: IdentityProviderInput): void {
    for (const field of ['issuer', 'jwks_uri'] as const) {
      const value = input[field];
      if (typeof value !== 'string') continue;
      try {
        this.outbound.check(value);
      } catch (err) {
        if (!(err instanceof OutboundRefused)) throw err;
        const message = `${field} must be an https URL of a public host (http and internal addresses only for what OUTBOUND_ALLOWLIST names): ${err.message}`;
        throw invalidRequest(message, [{ field, message }]);
      }
    }
  }

  async list(access: Access, tenantId: string, req: ListRequest): Promise<ListPage<IdentityProviderRecord>> {
    await this.assertTenant(this.db, access, tenantId);
    const p = new Params();
    // The tenant of the path (reached by the caller, checked above) confines the list as a restriction would.
    const ofTenant = { instanceId: access.instanceId, restricted: true, tenantId };
    return listPage<IdentityProviderRecord>(this.db, {
      ...req,
      select: () => IDENTITY_PROVIDER_COLUMNS,
      from: identityProvidersTable.from,
      conditions: identityProvidersTable.conditions(ofTenant, p),
      params: p,
      tieBreak: 'tip.id',
    });
  }

  async get(access: Access, tenantId: string, id: string): Promise<IdentityProviderRecord> {
    await this.assertTenant(this.db, access, tenantId);
    return findIdentityProvider(this.db, access, tenantId, id);
  }

  async create(
    access: Access,
    tenantId: string,
    input: IdentityProviderInput & { issuer: string },
  ): Promise<IdentityProviderRecord> {
    this.checkUrls(input);
    return this.db.transaction(async (tx) => {
      await this.assertTenant(tx, access, tenantId);
      // the id is made here: the sealed client secret is bound to it
      const id = randomUUID();
      const [row] = await withConflicts(IDENTITY_PROVIDER_CONFLICTS, () =>
        tx.rows<{ id: string }>(
          `INSERT INTO tenant_identity_providers (id, instance_id, tenant_id, identity_provider, name, issuer,
                                                  client_id, client_secret_enc, jwks_uri, enabled, created_by,
                                                  updated_by)
           VALUES ($11, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING id`,
          [
            access.instanceId,
            tenantId,
            input.identity_provider,
            input.name,
            normalIssuer(input.issuer),
            input.client_id,
            this.box.encryptNullable(input.client_secret, sealedIn.identityProviderSecret(id)),
            input.jwks_uri ?? null,
            input.enabled ?? true,
            access.actor,
            id,
          ],
        ),
      );
      const created = await findIdentityProvider(tx, access, tenantId, row.id);
      return identityProviderRecord(created, input.client_secret ?? null);
    });
  }

  async update(
    access: Access,
    tenantId: string,
    id: string,
    input: IdentityProviderInput,
  ): Promise<IdentityProviderRecord> {
    this.checkUrls(input);
    return this.db.transaction(async (tx) => {
      await this.assertTenant(tx, access, tenantId);
      const cur = await findIdentityProvider(tx, access, tenantId, id, { lock: true });
      const sets: string[] = [];
      const p = new Params([cur.id]);
      const set = (column: string, value: unknown) => sets.push(`${column} = ${p.add(value)}`);
      if (input.identity_provider !== undefined) set('identity_provider', input.identity_provider);
      if (input.name !== undefined) set('name', input.name);
      if (input.issuer !== undefined) set('issuer', normalIssuer(input.issuer));
      if (input.client_id !== undefined) set('client_id', input.client_id);
      if (input.client_secret !== undefined)
        set(
          'client_secret_enc',
          this.box.encryptNullable(input.client_secret, sealedIn.identityProviderSecret(cur.id)),
        );
      if (input.jwks_uri !== undefined) set('jwks_uri', input.jwks_uri);
      if (input.enabled !== undefined) set('enabled', input.enabled);
      set('updated_by', access.actor);
      await withConflicts(IDENTITY_PROVIDER_CONFLICTS, () =>
        tx.exec(
          `UPDATE tenant_identity_providers SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
          p.values,
        ),
      );
      return findIdentityProvider(tx, access, tenantId, cur.id);
    });
  }

  /** Deletes the provider; the users it made and their identities stay (the identities forget the provider). */
  async remove(access: Access, tenantId: string, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await this.assertTenant(tx, access, tenantId);
      const cur = await findIdentityProvider(tx, access, tenantId, id, { lock: true });
      await tx.exec(`DELETE FROM tenant_identity_providers WHERE id = $1`, [cur.id]);
    });
  }

  /** 404 unless the tenant is of the caller's instance and, for a caller that is not global, its own. */
  private async assertTenant(db: Sql, access: Access, tenantId: string): Promise<void> {
    if (!(await tenantExists(db, access, tenantId))) throw notFound(`Tenant ${tenantId} not found`);
  }
}
