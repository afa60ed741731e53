import { Inject, Injectable } from '@nestjs/common';
import { Db, listPage, Params, withConflicts, type ListPage } from '@gatehouse/db';
import { conflict, forbidden } from '@gatehouse/errors';
import {
  addTenantAdmins,
  findTenant,
  findUsers,
  insertTenant,
  removeTenantAdmins,
  TENANT_AGGREGATION_COLUMNS,
  TENANT_COLUMNS,
  TENANT_CONFLICTS,
  tenantConditions,
  tenantHoldings,
  tenantsTable,
  updateTenant,
  type TenantInput,
  type TenantRowWithCounts,
} from '@gatehouse/identity-data';
import { embedChildren, wants, type ReadQuery, type ListRequest } from '@gatehouse/query';
import type { Access } from '../common/access.js';
import { dedupe } from '../common/permissions.js';
import type { UserRecord } from '../users/user.record.js';
import { UsersService } from '../users/users.service.js';
import { tenantRecord, type TenantRecord } from './tenant.record.js';

/**
 * Tenants of the caller's instance and their admins. A caller that is not global reaches only its own tenant
 * (others: 404): it may read and modify it and manage its admins (among its tenant's users), but neither create
 * nor delete tenants (403). A tenant that still holds users, clients, resources, roles or groups cannot be deleted
 * (409 naming them); its admin links go with it.
 */
@Injectable()
export class TenantsService {
  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(UsersService) private readonly users: UsersService,
  ) {}

  async list(access: Access, req: ListRequest): Promise<ListPage<TenantRecord>> {
    const params = new Params();
    const page = await listPage<TenantRowWithCounts>(this.db, {
      ...req,
      select: (list) =>
        wants(list.fields, 'aggregations')
          ? `${TENANT_COLUMNS}, ${TENANT_AGGREGATION_COLUMNS}`
          : TENANT_COLUMNS,
      from: `${tenantsTable.from} /* scoped: tenantConditions below */`,
      conditions: tenantConditions(access, params),
      params,
    });
    const records = page.rows.map(tenantRecord);
    await this.embed(access, records, page.list);
    return { ...page, rows: records };
  }

  async get(access: Access, id: string, read: ReadQuery): Promise<TenantRecord> {
    const row = await findTenant(this.db, access, id, { aggregations: wants(read.fields, 'aggregations') });
    const rec = tenantRecord(row);
    await this.embed(access, [rec], read);
    return rec;
  }

  async create(access: Access, input: TenantInput, read: ReadQuery): Promise<TenantRecord> {
    if (access.restricted) throw forbidden('A client that is not global cannot create tenants');
    const id = await this.db.transaction((tx) =>
      withConflicts(TENANT_CONFLICTS, () => insertTenant(tx, access.instanceId, input, access.actor)),
    );
    return this.get(access, id, read);
  }

  async update(access: Access, id: string, input: TenantInput, read: ReadQuery): Promise<TenantRecord> {
    await this.db.transaction(async (tx) => {
      const current = await findTenant(tx, access, id, { lock: true });
      await withConflicts(TENANT_CONFLICTS, () => updateTenant(tx, current, input, access.actor));
    });
    return this.get(access, id, read);
  }

  async remove(access: Access, id: string): Promise<void> {
    if (access.restricted) throw forbidden('A client that is not global cannot delete tenants');
    await this.db.transaction(async (tx) => {
      const current = await findTenant(tx, access, id, { lock: true });
      const held = Object.entries(await tenantHoldings(tx, current.id)).filter(([, n]) => n > 0);
      if (held.length) {
        throw conflict(
          `Tenant ${current.id} still holds ${held.map(([k, n]) => `${n} ${k}`).join(', ')}; delete or move them first`,
        );
      }
      // its admin role goes with it (it is not counted among the roles it holds)
      await tx.exec(`DELETE FROM roles WHERE tenant_id = $1 AND system_role = 'tenant_admin'`, [current.id]);
      await tx.exec(`DELETE FROM tenants WHERE id = $1`, [current.id]);
    });
  }

  async listAdmins(access: Access, id: string, req: ListRequest): Promise<ListPage<UserRecord>> {
    const tenant = await findTenant(this.db, access, id);
    return this.users.listAdmins(access, tenant.id, req);
  }

  /**
   * Makes users admins of the tenant: users of the caller's reach (others 404), each of this tenant or global (a
   * user of another tenant: 409). Idempotent; nothing is written on any error.
   */
  async addAdmins(access: Access, id: string, userIds: string[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      const tenant = await findTenant(tx, access, id, { lock: true });
      const users = await findUsers(tx, access, dedupe(userIds));
      const foreign = users.filter((u) => u.tenant_id !== null && u.tenant_id !== tenant.id);
      if (foreign.length) {
        throw conflict(
          `A user of another tenant cannot administer tenant ${tenant.id}: ${foreign.map((u) => u.id).join(', ')}`,
        );
      }
      await addTenantAdmins(
        tx,
        tenant,
        users.map((u) => u.id),
        access.actor,
      );
    });
  }

  /** Removes users from the tenant's admins; idempotent, users the caller cannot reach: 404. */
  async removeAdmins(access: Access, id: string, userIds: string[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      const tenant = await findTenant(tx, access, id, { lock: true });
      const users = await findUsers(tx, access, dedupe(userIds));
      await removeTenantAdmins(
        tx,
        tenant.id,
        users.map((u) => u.id),
      );
    });
  }

  /** `admins` (User records) of the tenants on expand=all. */
  private async embed(access: Access, records: TenantRecord[], read: ReadQuery): Promise<void> {
    if (!read.expand || !records.length || !wants(read.fields, 'admins')) return;
    const admins = await this.users.adminsOf(
      this.db,
      access,
      records.map((r) => r.id),
    );
    embedChildren(records, 'admins', admins);
  }
}
