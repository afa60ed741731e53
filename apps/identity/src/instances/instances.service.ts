import { Inject, Injectable } from '@nestjs/common';
import {
  Db,
  listPage,
  Params,
  withConflicts,
  type ListPage,
  type RecordScope,
  type Sql,
} from '@gatehouse/db';
import { conflict, forbidden } from '@gatehouse/errors';
import {
  DEFAULT_INSTANCE_SETTINGS,
  findInstance,
  INSTANCE_AGGREGATION_COLUMNS,
  INSTANCE_COLUMNS,
  instanceConditions,
  INSTANCES_FROM,
  isDefaultInstance,
  SECRET_BOX,
  seedInstance,
  USER_COLUMNS,
  usersOfInstance,
  usersTable,
  type AppMetadataEntry,
  type InstanceReach,
  type InstanceRowWithCounts,
  type InstanceSettings,
  type MfaPolicy,
  type SecretBox,
  type UserRow,
  giveAdminRole,
  takeAdminRole,
} from '@gatehouse/identity-data';
import { wants, type ReadQuery, type ListRequest } from '@gatehouse/query';
import type { Access } from '../common/access.js';
import { EMBED_LIMIT } from '../client-access/client-access.queries.js';
import { userRecord, type UserRecord } from '../users/user.record.js';
import { UsersService } from '../users/users.service.js';
import type { InstanceMetadataDto } from './dto/instance.dto.js';
import { instanceRecord, type InstanceRecord } from './instance.record.js';

export interface InstanceInput {
  instance_name?: string;
  instance_description?: string | null;
  instance_metadata?: InstanceMetadataDto;
  app_metadata?: AppMetadataEntry[];
  mfa?: MfaPolicy | null;
}

const CONFLICTS = { ux_instances_name: 'An instance with this instance_name exists' };

/** The lists of instance_metadata that were given, as plain JSON (the others are left out). */
function metadataChanges(m: InstanceMetadataDto | undefined): InstanceSettings {
  const out: InstanceSettings = {};
  if (!m) return out;
  if (m.identity_providers !== undefined) {
    out.identity_providers = m.identity_providers.map((p) => ({
      identity_provider: p.identity_provider,
      enabled: p.enabled,
    }));
  }
  if (m.supported_locales !== undefined) out.supported_locales = [...m.supported_locales];
  if (m.password_validators !== undefined) {
    out.password_validators = m.password_validators.map((v) => ({
      order: v.order,
      validator: v.validator,
      description: v.description,
      rules: v.rules,
    }));
  }
  return out;
}

/**
 * Instances (multi-instance mode, document 2). Who reaches what (docs/contract.md "Instances"):
 * - a global client of the default instance reaches every instance: lists, reads, creates and modifies them;
 * - any other caller reaches its own instance only (a list of one; another instance's id is 404; creating is 403);
 * - a client bound to a tenant (not global) reads its own instance but changes nothing (403), and sees only the
 *   admins of its own tenant.
 */
@Injectable()
export class InstancesService {
  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(UsersService) private readonly users: UsersService,
  ) {}

  /** The instances `access` reaches. */
  async reach(access: Access, db: Sql = this.db): Promise<InstanceReach> {
    const all = !access.restricted && (await isDefaultInstance(db, access.instanceId));
    return { instanceId: access.instanceId, all };
  }

  async list(access: Access, req: ListRequest): Promise<ListPage<InstanceRecord>> {
    const reach = await this.reach(access);
    const params = new Params();
    const page = await listPage<InstanceRowWithCounts>(this.db, {
      ...req,
      select: (list) =>
        wants(list.fields, 'aggregations')
          ? `${INSTANCE_COLUMNS}, ${INSTANCE_AGGREGATION_COLUMNS}`
          : INSTANCE_COLUMNS,
      from: INSTANCES_FROM,
      conditions: instanceConditions(reach, params),
      params,
      tieBreak: 'i.id',
    });
    const records = page.rows.map(instanceRecord);
    await this.embedAdmins(this.db, access, records, page.list);
    return { ...page, rows: records };
  }

  async get(access: Access, id: string, read: ReadQuery, db: Sql = this.db): Promise<InstanceRecord> {
    const row = await findInstance(db, await this.reach(access, db), id, {
      aggregations: wants(read.fields, 'aggregations'),
    });
    const rec = instanceRecord(row);
    await this.embedAdmins(db, access, [rec], read);
    return rec;
  }

  /**
   * A new instance with its own system resources and default client, in one transaction; the answer carries the
   * default client's credentials (shown this once). Only a global client of the default instance creates.
   */
  async create(access: Access, input: InstanceInput, read: ReadQuery): Promise<InstanceRecord> {
    this.assertWriter(access);
    return this.db.transaction(async (tx) => {
      const reach = await this.reach(access, tx);
      if (!reach.all) {
        throw forbidden('Only a global client of the default instance creates instances');
      }
      const [defaults] = await tx.rows<{ multi_tenant: boolean }>(
        `SELECT multi_tenant FROM instances WHERE is_default`,
      );
      const seeded = await withConflicts(CONFLICTS, () =>
        seedInstance(
          tx,
          {
            name: String(input.instance_name).trim(),
            description: input.instance_description ?? null,
            settings: { ...DEFAULT_INSTANCE_SETTINGS, ...metadataChanges(input.instance_metadata) },
            appMetadata: input.app_metadata ?? [],
            multiTenant: defaults?.multi_tenant ?? false,
            actor: access.actor,
          },
          this.box,
        ),
      );
      if (input.mfa !== undefined && input.mfa !== null) {
        await tx.exec(`UPDATE instances SET mfa = $2 WHERE id = $1`, [seeded.instanceId, input.mfa]);
      }
      const rec = await this.get(access, seeded.instanceId, read, tx);
      return {
        ...rec,
        default_client: { client_id: seeded.clientId, client_secret: seeded.clientSecret },
      };
    });
  }

  /** Fields not given keep their value; each instance_metadata list given replaces that list. */
  async update(access: Access, id: string, input: InstanceInput, read: ReadQuery): Promise<InstanceRecord> {
    this.assertWriter(access);
    return this.db.transaction(async (tx) => {
      const cur = await findInstance(tx, await this.reach(access, tx), id, { lock: true });
      const settings = { ...(cur.settings ?? {}), ...metadataChanges(input.instance_metadata) };
      await withConflicts(CONFLICTS, () =>
        tx.exec(
          `UPDATE instances SET name = $2, description = $3, settings = $4::jsonb, app_metadata = $5::jsonb,
                  updated_by = $6, updated_at = now(), mfa = $7
            WHERE id = $1`,
          [
            cur.id,
            input.instance_name !== undefined ? input.instance_name.trim() : cur.name,
            input.instance_description !== undefined ? input.instance_description : cur.description,
            JSON.stringify(settings),
            JSON.stringify(input.app_metadata ?? cur.app_metadata ?? []),
            access.actor,
            input.mfa !== undefined ? input.mfa : cur.mfa,
          ],
        ),
      );
      return this.get(access, cur.id, read, tx);
    });
  }

  /** The admins of the instance (User records), with the list parameters of Get users. */
  async listAdmins(access: Access, id: string, req: ListRequest): Promise<ListPage<UserRecord>> {
    const instance = await findInstance(this.db, await this.reach(access), id);
    const scope = this.adminScope(access, instance.id);
    const params = new Params();
    const page = await listPage<UserRow>(this.db, {
      ...req,
      select: () => 'u.id',
      from: `${usersTable.from} JOIN instance_admins ia ON ia.user_id = u.id AND ia.instance_id = u.instance_id`,
      conditions: usersTable.conditions(scope, params),
      params,
      tieBreak: 'u.id',
    });
    // Each admin as Get a user answers it (fields, expand, aggregations), in the instance's scope.
    const asUsers = { ...access, ...scope };
    const records: UserRecord[] = [];
    for (const row of page.rows) records.push(await this.users.get(asUsers, row.id, page.list));
    return { ...page, rows: records };
  }

  /** Adds admins (idempotent). Every id must be a user of the instance: otherwise 409 and nothing is written. */
  async addAdmins(access: Access, id: string, userIds: string[]): Promise<void> {
    this.assertWriter(access);
    await this.db.transaction(async (tx) => {
      const instance = await findInstance(tx, await this.reach(access, tx), id, { lock: true });
      const ids = await this.assertUsersOf(tx, instance.id, userIds);
      await tx.exec(
        `INSERT INTO instance_admins (instance_id, user_id, created_by, updated_by)
         SELECT $1, unnest($2::uuid[]), $3, $3
         ON CONFLICT (instance_id, user_id) DO NOTHING`,
        [instance.id, ids, access.actor],
      );
      // an admin's scopes come from the instance's admin role, never from the client it signs in with
      await giveAdminRole(tx, instance.id, null, ids, access.actor);
    });
  }

  /** Removes admins (idempotent: a user who is no admin is no error); ids that are no users of the instance: 409. */
  async removeAdmins(access: Access, id: string, userIds: string[]): Promise<void> {
    this.assertWriter(access);
    await this.db.transaction(async (tx) => {
      const instance = await findInstance(tx, await this.reach(access, tx), id, { lock: true });
      const ids = await this.assertUsersOf(tx, instance.id, userIds);
      await tx.exec(`DELETE FROM instance_admins WHERE instance_id = $1 AND user_id = ANY($2::uuid[])`, [
        instance.id,
        ids,
      ]);
      await takeAdminRole(tx, instance.id, null, ids);
    });
  }

  private assertWriter(access: Access): void {
    if (access.restricted) {
      throw forbidden('A client bound to a tenant (not global) cannot change instances or their admins');
    }
  }

  /** The distinct lower-cased ids; 409 naming those that are no users of the instance (unknown ids alike). */
  private async assertUsersOf(db: Sql, instanceId: string, userIds: string[]): Promise<string[]> {
    const ids = [...new Set(userIds.map((u) => u.toLowerCase()))];
    const found = new Set(await usersOfInstance(db, instanceId, ids));
    const missing = ids.filter((u) => !found.has(u));
    if (missing.length) {
      throw conflict(
        `An instance admin must be a user of the instance; not users of it: ${missing.join(', ')}`,
      );
    }
    return ids;
  }

  /** The users an admins list shows: those of the instance, and for a tenant-bound caller only its tenant's. */
  private adminScope(access: Access, instanceId: string): RecordScope {
    return { instanceId, restricted: access.restricted, tenantId: access.tenantId };
  }

  /** `admins` of each record on expand=all: User records (at most EMBED_LIMIT each, oldest first). */
  private async embedAdmins(db: Sql, access: Access, records: InstanceRecord[], read: ReadQuery) {
    if (!read.expand || !wants(read.fields, 'admins')) return;
    for (const rec of records) {
      const p = new Params();
      const rows = await db.rows<UserRow>(
        `SELECT ${USER_COLUMNS}
           FROM ${usersTable.from} JOIN instance_admins ia ON ia.user_id = u.id AND ia.instance_id = u.instance_id
          WHERE ${usersTable.where(this.adminScope(access, rec.id), p)}
          ORDER BY ia.created_at, u.id LIMIT ${EMBED_LIMIT}`,
        p.values,
      );
      rec.admins = rows.map((r) => userRecord(r) as unknown as Record<string, unknown>);
    }
  }
}
