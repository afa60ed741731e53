import { groupByParent, wants, type ReadQuery, type ListRequest } from '@gatehouse/query';
import { Db, type ListPage, listPage, Params, type Sql, withConflicts } from '@gatehouse/db';
import { Inject, Injectable } from '@nestjs/common';
import { invalidRequest } from '@gatehouse/errors';
import {
  checkPasswordPolicy,
  findUser,
  hashPassword,
  identitiesOfUsers,
  insertEvents,
  isTenantAdmin,
  liveTokenCounts,
  normalizePhone,
  resetFailedLogins,
  isAccountLocked,
  revokeUserTokens,
  USER_AGGREGATION_COLUMNS,
  USER_TENANT_COLUMNS,
  usersTable,
  userTenantsFrom,
  type AppMetadataEntry,
  type InstanceSettings,
  type UserRowWithCounts,
  type UserTenantRow,
} from '@gatehouse/identity-data';
import type { Access } from '../common/access.js';
import { auditEvent } from '../common/audit.js';
import { tenantForNewRecord } from '../common/tenants.js';
import { EMBED_LIMIT } from '../client-access/client-access.queries.js';
import { USER_COLUMNS, userRecord, type UserIdentityRecord, type UserRecord } from './user.record.js';
import { embedChildren } from '../memberships/embed.js';
import { LINK_KINDS } from '../memberships/link-kinds.js';
import { PERMISSION_KINDS } from '../memberships/memberships.service.js';

export interface UserInput {
  user_email?: string | null;
  user_name?: string | null;
  user_phone?: string | null;
  password?: string;
  user_nickname?: string | null;
  user_fullName?: string | null;
  user_email_verified?: boolean;
  user_phone_verified?: boolean;
  user_metadata?: Record<string, unknown>;
  app_metadata?: AppMetadataEntry[];
  tenant_id?: string | null;
}

// Unique in the instance, across its tenants: the answer says neither where nor whose, so that a tenant-bound caller
// learns no more than that the value cannot be used (docs/security.md).
const CONFLICTS = {
  ux_users_email: 'This user_email is not available',
  ux_users_name: 'This user_name is not available',
  ux_users_phone: 'This user_phone is not available',
};

/** `+976 9911-2233` -> `+97699112233`; a number that is not E.164 afterwards is 400. */
function phone(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const e164 = normalizePhone(value);
  if (!/^\+[1-9]\d{4,14}$/.test(e164)) {
    throw invalidRequest('user_phone must be an E.164 phone number (+ and 5 to 15 digits)', [
      { field: 'user_phone', message: 'not an E.164 number' },
    ]);
  }
  return e164;
}

const trimmed = (v: string | null | undefined) => (typeof v === 'string' ? v.trim() : v);

const linkKind = (tag: string) => LINK_KINDS.find((k) => k.tag === tag)!;

/** The user's roles, permissions and groups (the link records of User Roles, User Permissions, User Groups). */
const embedUserChildren = embedChildren([
  { field: 'roles', kind: linkKind('User Roles') },
  { field: 'permissions', kind: PERMISSION_KINDS[1], permission: true },
  { field: 'groups', kind: linkKind('User Groups') },
]);

/**
 * Users of the caller's instance (a caller that is not global: of its tenant). A blocked user gets no token (the
 * token server checks `is_blocked` at every login, refresh and introspection) and its grants, refresh tokens and
 * stored access tokens are revoked when it is blocked or deleted.
 */
@Injectable()
export class UsersService {
  constructor(@Inject(Db) private readonly db: Db) {}

  async list(access: Access, req: ListRequest): Promise<ListPage<UserRecord>> {
    const params = new Params();
    const page = await listPage<UserRowWithCounts>(this.db, {
      ...req,
      select: (list) =>
        wants(list.fields, 'aggregations') ? `${USER_COLUMNS}, ${USER_AGGREGATION_COLUMNS}` : USER_COLUMNS,
      from: usersTable.from,
      conditions: usersTable.conditions(access, params),
      params,
    });
    const records = await this.complete(this.db, page.rows, page.list);
    return { ...page, rows: records };
  }

  async get(access: Access, id: string, read: ReadQuery): Promise<UserRecord> {
    return this.load(this.db, access, id, read);
  }

  /**
   * The users (in the caller's reach) who administer `tenantId`, a tenant the caller already found in its scope:
   * Tenant Admins' list, as User records.
   */
  async listAdmins(access: Access, tenantId: string, req: ListRequest): Promise<ListPage<UserRecord>> {
    const params = new Params();
    const conditions = usersTable.conditions(access, params);
    conditions.push(isTenantAdmin(params, tenantId));
    const page = await listPage<UserRowWithCounts>(this.db, {
      ...req,
      select: (list) =>
        wants(list.fields, 'aggregations') ? `${USER_COLUMNS}, ${USER_AGGREGATION_COLUMNS}` : USER_COLUMNS,
      from: usersTable.from,
      conditions,
      params,
    });
    const records = await this.complete(this.db, page.rows, page.list);
    return { ...page, rows: records };
  }

  /**
   * The admins of each tenant in `tenantIds` (tenants the caller found in its scope) that the caller reaches, at
   * most EMBED_LIMIT each, oldest link first: the `admins` child of tenant records (User records without
   * aggregations or children).
   */
  async adminsOf(db: Sql, access: Access, tenantIds: string[]): Promise<Map<string, UserRecord[]>> {
    const p = new Params([tenantIds]);
    const rows = await db.rows<UserRowWithCounts & { __tenant: string }>(
      `SELECT * FROM (
         SELECT ${USER_COLUMNS}, ta.tenant_id AS __tenant,
                row_number() OVER (PARTITION BY ta.tenant_id ORDER BY ta.created_at, ta.id) AS __rn
           FROM ${usersTable.from} JOIN tenant_admins ta ON ta.user_id = u.id
          WHERE ta.tenant_id = ANY($1::uuid[]) AND ${usersTable.where(access, p)}) x
        WHERE __rn <= ${EMBED_LIMIT} ORDER BY __rn`,
      p.values,
    );
    return groupByParent(rows, (row) => row.__tenant, userRecord, tenantIds);
  }

  /**
   * GET /users/:user_id/tenants: the user's `tenants` entries (its own tenant and those it administers, one entry
   * per tenant, `id` the tenant's id).
   */
  async listTenants(access: Access, id: string, req: ListRequest): Promise<ListPage<UserTenantRow>> {
    const user = await this.find(this.db, access, id);
    return listPage<UserTenantRow>(this.db, {
      ...req,
      select: () => USER_TENANT_COLUMNS,
      from: userTenantsFrom('$1'),
      conditions: [],
      params: [[user.id]],
      tieBreak: 'l.id',
    });
  }

  async create(access: Access, input: UserInput, read: ReadQuery): Promise<UserRecord> {
    const email = trimmed(input.user_email);
    const name = trimmed(input.user_name);
    const phoneNumber = phone(input.user_phone);
    if (!email && !name && !phoneNumber) {
      throw invalidRequest('A user needs at least one of user_email, user_name, user_phone', [
        { field: 'user_email', message: 'one of user_email, user_name, user_phone is required' },
      ]);
    }
    return this.db.transaction(async (m) => {
      const tenantId = await tenantForNewRecord(m, access, input.tenant_id);
      const passwordHash =
        input.password !== undefined ? await this.checkedHash(m, access.instanceId, input.password) : null;
      const [row] = await withConflicts(CONFLICTS, () =>
        m.rows<{ id: string }>(
          `INSERT INTO users (instance_id, tenant_id, user_email, user_name, phone_number, password_hash, nickname,
                              name, email_verified, phone_verified, user_metadata, app_metadata, created_by,
                              updated_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12::jsonb, $13, $13) RETURNING id`,
          [
            access.instanceId,
            tenantId,
            email ?? null,
            name ?? null,
            phoneNumber ?? null,
            passwordHash,
            input.user_nickname ?? null,
            input.user_fullName ?? null,
            input.user_email_verified ?? false,
            input.user_phone_verified ?? false,
            JSON.stringify(input.user_metadata ?? {}),
            JSON.stringify(input.app_metadata ?? []),
            access.actor,
          ],
        ),
      );
      return this.load(m, access, row.id, read);
    });
  }

  async update(access: Access, id: string, input: UserInput, read: ReadQuery): Promise<UserRecord> {
    return this.db.transaction(async (m) => {
      const cur = await this.find(m, access, id, true);
      const email = input.user_email !== undefined ? trimmed(input.user_email) : cur.user_email;
      const name = input.user_name !== undefined ? trimmed(input.user_name) : cur.user_name;
      const phoneNumber = input.user_phone !== undefined ? phone(input.user_phone) : cur.phone_number;
      if (!email && !name && !phoneNumber) {
        throw invalidRequest('A user needs at least one of user_email, user_name, user_phone', [
          { field: 'user_email', message: 'one of user_email, user_name, user_phone must remain' },
        ]);
      }
      // A new address is not verified unless the caller says so.
      const emailChanged = (email ?? '').toLowerCase() !== (cur.user_email ?? '').toLowerCase();
      const phoneChanged = (phoneNumber ?? '') !== (cur.phone_number ?? '');
      await withConflicts(CONFLICTS, () =>
        m.exec(
          `UPDATE users SET user_email = $2, user_name = $3, phone_number = $4, nickname = $5, name = $6,
                  email_verified = $7, phone_verified = $8, user_metadata = $9::jsonb, app_metadata = $10::jsonb,
                  updated_by = $11, updated_at = now()
            WHERE id = $1`,
          [
            cur.id,
            email ?? null,
            name ?? null,
            phoneNumber ?? null,
            input.user_nickname !== undefined ? input.user_nickname : cur.nickname,
            input.user_fullName !== undefined ? input.user_fullName : cur.name,
            input.user_email_verified ?? (emailChanged ? false : cur.email_verified),
            input.user_phone_verified ?? (phoneChanged ? false : cur.phone_verified),
            JSON.stringify(input.user_metadata ?? cur.user_metadata ?? {}),
            JSON.stringify(input.app_metadata ?? cur.app_metadata ?? []),
            access.actor,
          ],
        ),
      );
      return this.load(m, access, cur.id, read);
    });
  }

  /** Deletes the user (with its identities) and revokes everything the token server issued to it. */
  async remove(access: Access, id: string): Promise<void> {
    await this.db.transaction(async (m) => {
      const cur = await this.find(m, access, id, true);
      await m.exec(`DELETE FROM users WHERE id = $1`, [cur.id]);
      await this.revokeTokens(m, cur.id);
    });
  }

  /**
   * Sets the password after checking it against the instance's `password_validators` (400 naming every rule it
   * fails). Clears a brute-force lock, and revokes the user's grants and refresh tokens (and with them every access
   * token of those grants): whoever held the old password keeps nothing it obtained with it.
   */
  async setPassword(access: Access, id: string, password: string, read: ReadQuery): Promise<UserRecord> {
    return this.db.transaction(async (m) => {
      const cur = await this.find(m, access, id, true);
      const hash = await this.checkedHash(m, access.instanceId, password);
      // A locked account (per source or as a whole) is unlocked by this write: recorded as such, not only as the
      // lock columns' change (the per-source counters are not audited).
      const unlocked = (await isAccountLocked(m, cur.id))
        ? auditEvent({ type: 'account.unlocked', userId: cur.id, record: { type: 'user', id: cur.id } })
        : undefined;
      if (unlocked) await insertEvents(m, [unlocked]);
      await m.exec(
        `UPDATE users SET password_hash = $2, failed_login_count = 0, locked_until = NULL, updated_by = $3,
                updated_at = now()
          WHERE id = $1`,
        [cur.id, hash, access.actor],
      );
      await resetFailedLogins(m, cur.id);
      await this.revokeTokens(m, cur.id);
      return this.load(m, access, cur.id, read);
    });
  }

  /** Blocks (or unblocks) the user; blocking revokes its grants, refresh tokens and stored access tokens. */
  async setBlocked(access: Access, id: string, blocked: boolean, read: ReadQuery): Promise<UserRecord> {
    return this.db.transaction(async (m) => {
      const cur = await this.find(m, access, id, true);
      await m.exec(`UPDATE users SET is_blocked = $2, updated_by = $3, updated_at = now() WHERE id = $1`, [
        cur.id,
        blocked,
        access.actor,
      ]);
      if (blocked) await this.revokeTokens(m, cur.id);
      return this.load(m, access, cur.id, read);
    });
  }

  /**
   * Removes the user's oidc-provider artifacts from PostgreSQL: its grants, every artifact of those grants (refresh
   * and access tokens, codes) and anything else bound to its account. JWT access tokens carry their grant id, so
   * /tokeninfo reports them inactive once the grant is gone.
   */
  private async revokeTokens(db: Sql, userId: string): Promise<void> {
    // The same revocation the token server applies when a verified owner takes over an account.
    await revokeUserTokens(db, userId);
  }

  private async checkedHash(db: Sql, instanceId: string, password: string): Promise<string> {
    const [instance] = await db.rows<{ settings: InstanceSettings }>(
      `SELECT settings FROM instances WHERE id = $1`,
      [instanceId],
    );
    const failures = checkPasswordPolicy(instance?.settings?.password_validators, password);
    if (failures.length) {
      throw invalidRequest(
        `password does not meet the instance's password rules: ${failures.join('; ')}`,
        failures.map((message) => ({ field: 'password', message })),
      );
    }
    return hashPassword(password);
  }

  /** The user in the caller's instance and reach, or 404. */
  private find(
    db: Sql,
    access: Access,
    id: string,
    lock = false,
    counts = false,
  ): Promise<UserRowWithCounts> {
    return findUser(db, access, id, { lock, aggregations: counts });
  }

  private async load(db: Sql, access: Access, id: string, read: ReadQuery): Promise<UserRecord> {
    const row = await this.find(db, access, id, false, wants(read.fields, 'aggregations'));
    const [rec] = await this.complete(db, [row], read);
    return rec;
  }

  /** Records of the rows, with aggregations and children as the query asks (one query per kind for the page). */
  private async complete(db: Sql, found: UserRowWithCounts[], read: ReadQuery): Promise<UserRecord[]> {
    const records = found.map(userRecord);
    if (!found.length) return records;
    const ids = found.map((r) => r.id);
    if (wants(read.fields, 'aggregations')) {
      const tokens = await liveTokenCounts(db, ids);
      records.forEach((rec, i) => {
        const row = found[i];
        rec.aggregations = {
          id: rec.id,
          user_id: rec.id,
          last_sign_in_at: row.last_login_at,
          logins: row.login_count,
          identities: row.agg_identities ?? 0,
          // the user's own permissions and roles (GET /users/:id/permissions?effective=true lists all it holds)
          permissions: row.agg_permissions ?? 0,
          roles: row.agg_roles ?? 0,
          tokens: tokens.find((t) => t.user_id === rec.id)?.n ?? 0,
          authenticators: row.agg_authenticators ?? 0,
          created_by: rec.created_by,
          created_at: rec.created_at,
          updated_by: rec.updated_by,
          updated_at: rec.updated_at,
        };
      });
    }
    if (read.expand) {
      await embedUserChildren(db, null, records, read);
      const identities = wants(read.fields, 'identities') ? await this.identitiesOf(db, ids) : [];
      const tenants = wants(read.fields, 'tenants') ? await this.tenantsOf(db, ids) : [];
      records.forEach((rec) => {
        if (wants(read.fields, 'identities')) rec.identities = identities.filter((x) => x.user_id === rec.id);
        if (wants(read.fields, 'tenants')) rec.tenants = tenants.filter((x) => x.user_id === rec.id);
      });
    }
    return records;
  }

  /** The `tenants` entries of the users (at most EMBED_LIMIT each: the own tenant first, then the oldest links). */
  private async tenantsOf(db: Sql, userIds: string[]): Promise<UserTenantRow[]> {
    return db.rows<UserTenantRow>(
      `SELECT id, user_id, tenant_id, is_member, is_admin, created_by, created_at, updated_by, updated_at
         FROM (SELECT ${USER_TENANT_COLUMNS},
                      row_number() OVER (PARTITION BY l.user_id ORDER BY l.is_member DESC, l.created_at, l.id) AS rn
                 FROM ${userTenantsFrom('$1')}) t
        WHERE rn <= ${EMBED_LIMIT} ORDER BY user_id, rn`,
      [userIds],
    );
  }

  private async identitiesOf(db: Sql, userIds: string[]): Promise<UserIdentityRecord[]> {
    const found = await identitiesOfUsers(db, userIds, EMBED_LIMIT);
    return found.map((i) => {
      const p = i.profile ?? {};
      return {
        id: i.id,
        user_id: i.user_id,
        identity_provider: i.provider,
        user_identifier: i.provider_user_id,
        identity_data: {
          profile_picture: p.profile_picture ?? p.picture ?? null,
          username: p.username ?? p.preferred_username ?? null,
          user_fullname: p.user_fullname ?? p.name ?? null,
          email_verified: p.email_verified ?? null,
          phone: p.phone ?? p.phone_number ?? null,
          phone_verified: p.phone_verified ?? null,
        },
        refresh_token: null,
        access_token: null,
        access_token_secret: null,
        last_sign_in_at: i.last_sign_in_at,
        created_by: i.created_by,
        created_at: i.created_at,
        updated_by: i.updated_by,
        updated_at: i.updated_at,
      };
    });
  }
}
