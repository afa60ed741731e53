import { embedChildren, groupByParent, wants, type ReadQuery, type ListRequest } from '@gatehouse/query';
import { Db, isUuid, listPage, Params, type ListPage, type Sql, withConflicts } from '@gatehouse/db';
import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { forbidden, invalidRequest } from '@gatehouse/errors';
import {
  RESOURCES_READ_SECRETS,
  SECRET_BOX,
  sealedIn,
  type AppMetadataEntry,
  type SecretBox,
} from '@gatehouse/identity-data';
import { holds, type Access } from '../common/access.js';
import { tenantForNewRecord } from '../common/tenants.js';
import { clientsOfResources } from '../client-access/client-access.queries.js';
import { SCOPE_COLUMNS, type ScopeRecord } from '../scopes/scope.record.js';
import {
  RESOURCE_COLUMNS,
  resourceRecord,
  type ResourceRecord,
  type ResourceRow,
} from './resource.record.js';
import {
  findResource,
  RESOURCE_AGGREGATION_COLUMNS,
  resourcesTable,
  type ResourceRowWithCounts,
} from '@gatehouse/identity-data';
import { EMBED_LIMIT } from '../client-access/client-access.queries.js';

/** `resource_metadata` as written, in canonical (document 1) names. */
export interface ResourceMetadataInput {
  is_system?: boolean;
  identifier_url?: string | null;
  signing_algorithm?: string;
  signing_secret?: string;
  token_lifetime?: number;
  rbac_enabled?: boolean;
  skip_consent_for_first_party?: boolean;
}

export interface ResourceInput {
  resource_type?: string;
  resource_name?: string;
  resource_description?: string | null;
  resource_metadata?: ResourceMetadataInput;
  app_metadata?: AppMetadataEntry[];
}

const CONFLICTS = {
  uq_resources_identifier_url: 'A resource with this identifier_url already exists in the instance',
};

/** What may change on a system resource; everything else is protected (403). */
const SYSTEM_MUTABLE = new Set([
  'resource_description',
  'app_metadata',
  'token_lifetime',
  'skip_consent_for_first_party',
]);

const newSigningSecret = () => randomBytes(32).toString('base64url');

/**
 * Resources (APIs) of the caller's instance. `resource_metadata` lives in columns the token server reads on every
 * token request: a changed identifier, lifetime or signing algorithm shapes the next token.
 */
@Injectable()
export class ResourcesService {
  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  /**
   * In multi-tenant mode the `tenant_id` header narrows the list to one tenant (a caller that is not global may
   * name only its own: 403 otherwise); elsewhere the header is ignored.
   */
  async list(access: Access, req: ListRequest, tenantHeader: unknown): Promise<ListPage<ResourceRecord>> {
    const params = new Params();
    const conditions = resourcesTable.conditions(access, params);
    if (access.multiTenant && tenantHeader !== undefined) {
      if (typeof tenantHeader !== 'string' || !isUuid(tenantHeader.trim())) {
        throw invalidRequest('Header tenant_id must be a UUID', [
          { field: 'tenant_id', message: 'must be a UUID' },
        ]);
      }
      const wanted = tenantHeader.trim().toLowerCase();
      if (access.restricted && wanted !== access.tenantId) {
        throw forbidden('A client that is not global can only list its own tenant');
      }
      conditions.push(`r.tenant_id = ${params.add(wanted)}`);
    }
    const page = await listPage<ResourceRowWithCounts>(this.db, {
      ...req,
      select: (list) =>
        wants(list.fields, 'aggregations')
          ? `${RESOURCE_COLUMNS}, ${RESOURCE_AGGREGATION_COLUMNS}`
          : RESOURCE_COLUMNS,
      from: resourcesTable.from,
      conditions,
      params,
    });
    const records = page.rows.map((r) => this.withAggregations(resourceRecord(r), r));
    await this.embedChildren(this.db, access, records, page.list);
    return { ...page, rows: records };
  }

  async get(access: Access, id: string, read: ReadQuery): Promise<ResourceRecord> {
    return this.load(this.db, access, id, read);
  }

  async create(access: Access, input: ResourceInput, read: ReadQuery): Promise<ResourceRecord> {
    const md = input.resource_metadata ?? {};
    if (md.is_system) throw forbidden('System resources are made by the server; is_system must be false');
    const alg = md.signing_algorithm ?? 'ES256';
    const secret = this.secretFor(alg, md.signing_secret, null);
    return this.db.transaction(async (m) => {
      const tenantId = await tenantForNewRecord(m, access, undefined);
      // the id is made here: the sealed signing secret is bound to it
      const id = randomUUID();
      const [row] = await withConflicts(CONFLICTS, () =>
        m.rows<{ id: string }>(
          `INSERT INTO resources (id, instance_id, tenant_id, resource_type, resource_name, resource_description,
                                  identifier_url, signing_algorithm, signing_secret_enc, token_lifetime, rbac_enabled,
                                  skip_consent_for_first_party, app_metadata, created_by, updated_by)
           VALUES ($14, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $13)
           RETURNING id`,
          [
            access.instanceId,
            tenantId,
            input.resource_type,
            input.resource_name,
            input.resource_description ?? null,
            md.identifier_url ?? null,
            alg,
            this.box.encryptNullable(secret, sealedIn.resourceSigningSecret(id)),
            md.token_lifetime ?? 86400,
            md.rbac_enabled ?? false,
            md.skip_consent_for_first_party ?? true,
            JSON.stringify(input.app_metadata ?? []),
            access.actor,
            id,
          ],
        ),
      );
      // An HS256 secret (given or generated) is shown once, in this answer.
      return this.load(m, access, row.id, read, true);
    });
  }

  async update(access: Access, id: string, input: ResourceInput, read: ReadQuery): Promise<ResourceRecord> {
    return this.db.transaction(async (m) => {
      const cur = await findResource(m, access, id, { lock: true });
      const md = input.resource_metadata ?? {};
      const next = {
        resource_name: input.resource_name ?? cur.resource_name,
        resource_description:
          input.resource_description !== undefined ? input.resource_description : cur.resource_description,
        identifier_url: md.identifier_url !== undefined ? md.identifier_url : cur.identifier_url,
        signing_algorithm: md.signing_algorithm ?? cur.signing_algorithm,
        token_lifetime: md.token_lifetime ?? cur.token_lifetime,
        rbac_enabled: md.rbac_enabled ?? cur.rbac_enabled,
        skip_consent_for_first_party: md.skip_consent_for_first_party ?? cur.skip_consent_for_first_party,
        is_system: md.is_system ?? cur.is_system,
        app_metadata: input.app_metadata ?? cur.app_metadata,
      };
      this.protect(cur, next, md.signing_secret !== undefined);
      const currentSecret =
        cur.signing_algorithm === 'HS256' ? this.openSecret(cur.id, cur.signing_secret_enc) : null;
      const secret = this.secretFor(next.signing_algorithm, md.signing_secret, currentSecret);
      await withConflicts(CONFLICTS, () =>
        m.exec(
          `UPDATE resources SET resource_name = $2, resource_description = $3, identifier_url = $4,
                  signing_algorithm = $5, signing_secret_enc = $6, token_lifetime = $7, rbac_enabled = $8,
                  skip_consent_for_first_party = $9, app_metadata = $10::jsonb, updated_by = $11,
                  updated_date = now()
            WHERE id = $1`,
          [
            cur.id,
            next.resource_name,
            next.resource_description,
            next.identifier_url,
            next.signing_algorithm,
            secret === currentSecret
              ? cur.signing_secret_enc
              : this.box.encryptNullable(secret, sealedIn.resourceSigningSecret(cur.id)),
            next.token_lifetime,
            next.rbac_enabled,
            next.skip_consent_for_first_party,
            JSON.stringify(next.app_metadata),
            access.actor,
          ],
        ),
      );
      // A secret set or generated by this change is shown once, here.
      return this.load(m, access, cur.id, read, secret !== currentSecret);
    });
  }

  /** Deletes the resource with its scopes, authorizations and permissions. A system resource: 403. */
  async remove(access: Access, id: string): Promise<void> {
    await this.db.transaction(async (m) => {
      const cur = await findResource(m, access, id, { lock: true });
      if (cur.is_system) throw forbidden('A system resource cannot be deleted');
      await m.exec(`DELETE FROM resources WHERE id = $1`, [cur.id]);
    });
  }

  /** System resources keep their name, identifier, signing and system flag (the services depend on them). */
  private protect(cur: ResourceRow, next: Record<string, unknown>, secretGiven: boolean): void {
    if (!cur.is_system) {
      if (next.is_system) throw forbidden('System resources are made by the server; is_system must be false');
      return;
    }
    const changed = Object.keys(next).filter(
      (k) =>
        !SYSTEM_MUTABLE.has(k) && JSON.stringify(next[k]) !== JSON.stringify(cur[k as keyof ResourceRow]),
    );
    if (secretGiven) changed.push('signing_secret');
    if (changed.length) throw forbidden(`A system resource's ${changed.join(', ')} cannot be changed`);
  }

  /** The HS256 key to store: the one given, else the current one, else a new one; none for other algorithms. */
  private secretFor(alg: string, given: string | undefined, current: string | null): string | null {
    if (alg !== 'HS256') {
      if (given !== undefined) {
        throw invalidRequest('resource_metadata.signing_secret applies only to signing_algorithm HS256', [
          { field: 'resource_metadata.signing_secret', message: 'only for HS256' },
        ]);
      }
      return null;
    }
    return given ?? current ?? newSigningSecret();
  }

  private openSecret(id: string, sealed: string | null): string | null {
    try {
      return this.box.decryptNullable(sealed, sealedIn.resourceSigningSecret(id));
    } catch {
      return null;
    }
  }

  /**
   * One resource as `read` asks, with its HS256 signing secret when `showSecret` (the answer that made the secret)
   * or the caller holds `resources:read_secrets`.
   */
  private async load(
    db: Sql,
    access: Access,
    id: string,
    read: ReadQuery,
    showSecret = false,
  ): Promise<ResourceRecord> {
    const row = await findResource(db, access, id, { aggregations: wants(read.fields, 'aggregations') });
    let secret: string | null | undefined;
    if (showSecret || holds(access, RESOURCES_READ_SECRETS)) {
      secret = row.signing_algorithm === 'HS256' ? this.openSecret(row.id, row.signing_secret_enc) : null;
    }
    const rec = this.withAggregations(resourceRecord(row, secret), row);
    await this.embedChildren(db, access, [rec], read);
    return rec;
  }

  private withAggregations(rec: ResourceRecord, row: ResourceRowWithCounts): ResourceRecord {
    if (row.agg_scopes === undefined) return rec;
    rec.aggregations = {
      id: rec.id,
      resource_id: rec.id,
      scopes: row.agg_scopes,
      clients: row.agg_clients ?? 0,
      created_by: rec.created_by,
      created_at: rec.created_date,
      updated_by: rec.updated_by,
      updated_at: rec.updated_date,
    };
    return rec;
  }

  private async embedChildren(db: Sql, access: Access, records: ResourceRecord[], read: ReadQuery) {
    if (!read.expand || !records.length) return;
    const ids = records.map((r) => r.id);
    if (wants(read.fields, 'scopes')) {
      const scopes = await db.rows<ScopeRecord & { rn: string }>(
        `SELECT * FROM (SELECT ${SCOPE_COLUMNS}, row_number() OVER (PARTITION BY s.resource_id ORDER BY s.scope_name, s.id) AS rn
                          FROM scopes s WHERE s.resource_id = ANY($1::uuid[])) t
          WHERE rn <= ${EMBED_LIMIT} ORDER BY scope_name, id`,
        [ids],
      );
      embedChildren(
        records,
        'scopes',
        groupByParent(
          scopes,
          (s) => s.resource_id,
          ({ rn: _rn, ...s }) => s,
        ),
      );
    }
    if (wants(read.fields, 'clients')) {
      const clients = await clientsOfResources(db, access, ids);
      embedChildren(records, 'clients', clients);
    }
  }
}
