import { Inject, Injectable } from '@nestjs/common';
import { Db, iso, listPage, Params, type ListPage, type Sql } from '@gatehouse/db';
import { conflict } from '@gatehouse/errors';
import {
  EFFECTIVE_PERMISSION_SOURCES,
  findRole,
  findUser,
  lockNesting,
  nestGroup,
  unnestGroup,
} from '@gatehouse/identity-data';
import type { Access } from '../common/access.js';
import { assertGrantable, dedupe, resolveScopes, type PermissionEntry } from '../common/permissions.js';
import type { ListRequest } from '@gatehouse/query';
import {
  containerAndMember,
  linkColumns,
  type LinkEnd,
  type LinkKind,
  type LinkRecord,
} from './link-kinds.js';

/** Role Permissions and User Permissions: scopes granted to a role or to a user directly. */
export interface PermissionKind {
  tag: string;
  path: string;
  ownerParam: string;
  table: 'role_permissions' | 'user_permissions';
  ownerColumn: 'role_id' | 'user_id';
  read: string;
  write: string;
  noun: 'role' | 'user';
  findOwner: (db: Sql, access: Access, id: string, opts?: { lock?: boolean }) => Promise<LinkEnd>;
}

/** A permission of a role or user: `id`, the owner's id, `resource_id`, `scope_id`, audit fields. */
export type PermissionRecord = LinkRecord;

/** One source of an effective permission of a user (GET /users/:user_id/permissions?effective=true). */
export interface EffectivePermission {
  resource_id: string;
  scope_id: string;
  scope_name: string;
  identifier_url: string | null;
  source: 'direct' | 'role' | 'group';
  role_id: string | null;
  group_id: string | null;
}

export const permissionColumns = (k: PermissionKind) =>
  `l.id, l.${k.ownerColumn}, l.resource_id, l.scope_id, l.created_by, ${iso('l.created_at')} AS created_at,
   l.updated_by, ${iso('l.updated_at')} AS updated_at`;

/**
 * Links between users, roles and groups, and the permissions of roles and users. Adding and removing are bulk and
 * idempotent (204): a link that exists is not added twice, one that does not is not an error; an id the caller
 * cannot reach is 404 and nothing is written. A role or group of a tenant holds only users, roles and groups of
 * that tenant (or global roles and groups): 409 otherwise. Whatever is removed stops counting at once: the next
 * token and `/tokeninfo` of tokens already issued see the effective scopes of that moment.
 */
@Injectable()
export class MembershipsService {
  constructor(@Inject(Db) private readonly db: Db) {}

  async list(access: Access, k: LinkKind, ownerId: string, req: ListRequest): Promise<ListPage<LinkRecord>> {
    await k.findOwner(this.db, access, ownerId);
    return listPage<LinkRecord>(this.db, {
      ...req,
      select: () => linkColumns(k),
      from: `${k.table} l`,
      conditions: [`l.${k.ownerColumn} = $1`],
      params: [ownerId],
    });
  }

  async add(access: Access, k: LinkKind, ownerId: string, targetIds: string[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      const owner = await k.findOwner(tx, access, ownerId, { lock: true });
      if (k.nesting) await lockNesting(tx, owner.instance_id);
      const targets = await k.findTargets(tx, access, dedupe(targetIds));
      for (const target of targets) this.assertSameTenant(k, owner, target);
      if (k.nesting) {
        for (const child of targets) await nestGroup(tx, owner, child, access.actor);
        return;
      }
      await tx.exec(
        `INSERT INTO ${k.table} (instance_id, ${k.ownerColumn}, ${k.targetColumn}, created_by, updated_by)
         SELECT $1, $2, t, $4, $4 FROM unnest($3::uuid[]) AS t
         ON CONFLICT (${this.uniqueColumns(k)}) DO NOTHING`,
        [owner.instance_id, owner.id, targets.map((t) => t.id), access.actor],
      );
    });
  }

  async remove(access: Access, k: LinkKind, ownerId: string, targetIds: string[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      const owner = await k.findOwner(tx, access, ownerId, { lock: true });
      if (k.nesting) await lockNesting(tx, owner.instance_id);
      const targets = await k.findTargets(tx, access, dedupe(targetIds));
      if (k.nesting) {
        for (const child of targets) await unnestGroup(tx, owner.id, child.id);
      } else {
        await tx.exec(
          `DELETE FROM ${k.table} WHERE ${k.ownerColumn} = $1 AND ${k.targetColumn} = ANY($2::uuid[])`,
          [owner.id, targets.map((t) => t.id)],
        );
      }
    });
  }

  async listPermissions(
    access: Access,
    k: PermissionKind,
    ownerId: string,
    req: ListRequest,
  ): Promise<ListPage<PermissionRecord>> {
    await k.findOwner(this.db, access, ownerId);
    return listPage<PermissionRecord>(this.db, {
      ...req,
      select: () => permissionColumns(k),
      from: `${k.table} l`,
      conditions: [`l.${k.ownerColumn} = $1`],
      params: [ownerId],
    });
  }

  /** Grants scopes to a role or user. Scopes of system resources only as the caller holds them itself (403). */
  async grant(access: Access, k: PermissionKind, ownerId: string, entries: PermissionEntry[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      const owner = await k.findOwner(tx, access, ownerId, { lock: true });
      const pairs = await resolveScopes(tx, access, entries);
      await assertGrantable(tx, access, pairs);
      const foreign = pairs.filter(
        (p) => owner.tenant_id !== null && p.tenant_id !== null && p.tenant_id !== owner.tenant_id,
      );
      if (foreign.length) {
        throw conflict(
          `A ${k.noun} of tenant ${owner.tenant_id} cannot hold scopes of another tenant's resource: ${foreign.map((p) => p.scope_name).join(', ')}`,
        );
      }
      await tx.exec(
        `INSERT INTO ${k.table} (instance_id, ${k.ownerColumn}, resource_id, scope_id, created_by, updated_by)
         SELECT $1, $2, x.resource_id, x.scope_id, $5, $5
           FROM unnest($3::uuid[], $4::uuid[]) AS x(resource_id, scope_id)
         ON CONFLICT (${k.ownerColumn}, scope_id) DO NOTHING`,
        [
          owner.instance_id,
          owner.id,
          pairs.map((p) => p.resource_id),
          pairs.map((p) => p.scope_id),
          access.actor,
        ],
      );
    });
  }

  async revokePermissions(
    access: Access,
    k: PermissionKind,
    ownerId: string,
    entries: PermissionEntry[],
  ): Promise<void> {
    await this.db.transaction(async (tx) => {
      const owner = await k.findOwner(tx, access, ownerId, { lock: true });
      const pairs = await resolveScopes(tx, access, entries);
      await tx.exec(`DELETE FROM ${k.table} WHERE ${k.ownerColumn} = $1 AND scope_id = ANY($2::uuid[])`, [
        owner.id,
        pairs.map((p) => p.scope_id),
      ]);
    });
  }

  /** A user's effective permissions, one item per (scope, source), with `q`, `sort`, paging and the total. */
  async effective(access: Access, userId: string, req: ListRequest): Promise<ListPage<EffectivePermission>> {
    await findUser(this.db, access, userId);
    return listPage<EffectivePermission>(this.db, {
      ...req,
      select: () =>
        `e.resource_id, e.scope_id, s.scope_name, r.identifier_url, e.source, e.role_id, e.group_id`,
      from: `(${EFFECTIVE_PERMISSION_SOURCES}) e
             JOIN scopes s ON s.id = e.scope_id
             JOIN resources r /* unscoped: the user was found in scope; these are the resources it holds scopes of */
               ON r.id = e.resource_id`,
      conditions: [],
      params: new Params([userId]),
      defaultOrder: 'ORDER BY r.identifier_url, s.scope_name, e.source, e.role_id, e.group_id',
    });
  }

  private uniqueColumns(k: LinkKind): string {
    // each link table is unique on its pair, in the order of its constraint
    const pairs: Record<string, string> = {
      user_roles: 'user_id, role_id',
      group_members: 'group_id, user_id',
      group_roles: 'group_id, role_id',
      group_children: 'parent_id, child_id',
    };
    return pairs[k.table];
  }

  /**
   * What a tenant's role or group gives stays in the tenant (409 otherwise): a role or group of a tenant holds only
   * users and groups of that tenant, and a role of a tenant goes only to a group of that tenant. Global roles and
   * groups hold anything, and a global role may be given to any group.
   */
  private assertSameTenant(k: LinkKind, owner: LinkEnd, target: LinkEnd): void {
    const [container, member] = containerAndMember(k, owner, target);
    const [containerNoun, memberNoun] = k.container === 'owner' ? k.nouns : [k.nouns[1], k.nouns[0]];
    if (memberNoun === 'role') {
      if (member.tenant_id === null || member.tenant_id === container.tenant_id) return;
    } else if (container.tenant_id === null || member.tenant_id === container.tenant_id) return;
    throw conflict(
      `A ${containerNoun} of ${container.tenant_id === null ? 'no tenant' : `tenant ${container.tenant_id}`} cannot hold this ${memberNoun}` +
        `; ${memberNoun} ${member.id} is ${member.tenant_id === null ? 'global' : `of tenant ${member.tenant_id}`}`,
    );
  }
}

/** Role Permissions and User Permissions. */
export const PERMISSION_KINDS: PermissionKind[] = [
  {
    tag: 'Role Permissions',
    path: 'roles/:role_id/permissions',
    ownerParam: 'role_id',
    table: 'role_permissions',
    ownerColumn: 'role_id',
    read: 'roles:read',
    write: 'roles:write',
    noun: 'role',
    findOwner: findRole,
  },
  {
    tag: 'User Permissions',
    path: 'users/:user_id/permissions',
    ownerParam: 'user_id',
    table: 'user_permissions',
    ownerColumn: 'user_id',
    read: 'users:read',
    write: 'users:write',
    noun: 'user',
    findOwner: findUser,
  },
];
