import { iso, type RecordScope, type Sql } from '@gatehouse/db';
import {
  findGroup,
  findGroups,
  findRole,
  findRoles,
  findUser,
  findUsers,
  type GroupRow,
  type RoleRow,
} from '@gatehouse/identity-data';
import { auditAttributes, defineVersionedRecord, type VersionedSpecs } from '../common/records.js';
import {
  GROUPS_READ,
  GROUPS_WRITE,
  ROLES_READ,
  ROLES_WRITE,
  USERS_READ,
  USERS_WRITE,
} from '../common/scopes.js';

/** A record at either end of a link: its id and tenant (null: global). */
export interface LinkEnd {
  id: string;
  instance_id: string;
  tenant_id: string | null;
}

type FindOne = (db: Sql, scope: RecordScope, id: string, opts?: { lock?: boolean }) => Promise<LinkEnd>;
type FindMany = (db: Sql, scope: RecordScope, ids: string[]) => Promise<LinkEnd[]>;

/**
 * A link between two records, listed, added and removed from one side (the owner, in the path) with the ids of the
 * other (the targets, in the body): Role Members, User Roles, Group Members, User Groups, Group Roles, Nested
 * Groups. The link tables are shared: Role Members and User Roles are both `user_roles`, seen from each end.
 */
export interface LinkKind {
  tag: string;
  /** Route under /api/<v>, e.g. `roles/:role_id/members`. */
  path: string;
  ownerParam: string;
  /** Body field of the target ids: `users`, `roles`, `groups`. */
  bodyField: 'users' | 'roles' | 'groups';
  table: string;
  ownerColumn: string;
  targetColumn: string;
  read: string;
  write: string;
  findOwner: FindOne;
  findTargets: FindMany;
  /** Which end is the role or group whose tenant binds the other (a tenant role holds users of its tenant only). */
  container: 'owner' | 'target';
  /** Nested Groups: adding runs the cycle check and keeps the ancestry (group_closure). */
  nesting?: boolean;
  /** Singular nouns of owner and target, for messages. */
  nouns: [string, string];
  /** Listed only: the link is added and removed from its other end (Role Groups: at /groups/:group_id/roles). */
  readOnly?: boolean;
}

const user = { one: findUser as FindOne, many: findUsers as FindMany };
const role = { one: findRole as FindOne, many: findRoles as FindMany };
const group = { one: findGroup as FindOne, many: findGroups as FindMany };

export const LINK_KINDS: LinkKind[] = [
  {
    tag: 'Role Members',
    path: 'roles/:role_id/members',
    ownerParam: 'role_id',
    bodyField: 'users',
    table: 'user_roles',
    ownerColumn: 'role_id',
    targetColumn: 'user_id',
    read: ROLES_READ,
    write: ROLES_WRITE,
    findOwner: role.one,
    findTargets: user.many,
    container: 'owner',
    nouns: ['role', 'user'],
  },
  {
    tag: 'User Roles',
    path: 'users/:user_id/roles',
    ownerParam: 'user_id',
    bodyField: 'roles',
    table: 'user_roles',
    ownerColumn: 'user_id',
    targetColumn: 'role_id',
    read: USERS_READ,
    write: USERS_WRITE,
    findOwner: user.one,
    findTargets: role.many,
    container: 'target',
    nouns: ['user', 'role'],
  },
  {
    tag: 'Group Members',
    path: 'groups/:group_id/members',
    ownerParam: 'group_id',
    bodyField: 'users',
    table: 'group_members',
    ownerColumn: 'group_id',
    targetColumn: 'user_id',
    read: GROUPS_READ,
    write: GROUPS_WRITE,
    findOwner: group.one,
    findTargets: user.many,
    container: 'owner',
    nouns: ['group', 'user'],
  },
  {
    tag: 'User Groups',
    path: 'users/:user_id/groups',
    ownerParam: 'user_id',
    bodyField: 'groups',
    table: 'group_members',
    ownerColumn: 'user_id',
    targetColumn: 'group_id',
    read: USERS_READ,
    write: USERS_WRITE,
    findOwner: user.one,
    findTargets: group.many,
    container: 'target',
    nouns: ['user', 'group'],
  },
  {
    tag: 'Group Roles',
    path: 'groups/:group_id/roles',
    ownerParam: 'group_id',
    bodyField: 'roles',
    table: 'group_roles',
    ownerColumn: 'group_id',
    targetColumn: 'role_id',
    read: GROUPS_READ,
    write: GROUPS_WRITE,
    findOwner: group.one,
    findTargets: role.many,
    container: 'owner',
    nouns: ['group', 'role'],
  },
  {
    tag: 'Nested Groups',
    path: 'groups/:group_id/groups',
    ownerParam: 'group_id',
    bodyField: 'groups',
    table: 'group_children',
    ownerColumn: 'parent_id',
    targetColumn: 'child_id',
    read: GROUPS_READ,
    write: GROUPS_WRITE,
    findOwner: group.one,
    findTargets: group.many,
    container: 'owner',
    nesting: true,
    nouns: ['group', 'group'],
  },
  {
    // Group Roles seen from the role: the record's `links.groups`. Read-only, as Keycloak's GET
    // /roles/{role}/groups: a role is given to groups where groups are managed (groups:write).
    tag: 'Role Groups',
    path: 'roles/:role_id/groups',
    ownerParam: 'role_id',
    bodyField: 'groups',
    table: 'group_roles',
    ownerColumn: 'role_id',
    targetColumn: 'group_id',
    read: ROLES_READ,
    write: GROUPS_WRITE,
    findOwner: role.one,
    findTargets: group.many,
    container: 'target',
    nouns: ['role', 'group'],
    readOnly: true,
  },
];

/** The record of a link: `id`, the two ends' ids as the table names them, and its audit fields. */
export interface LinkRecord {
  id: string;
  [column: string]: string | null;
}

/** Columns of a link row (alias `l`). */
export const linkColumns = (k: LinkKind) =>
  `l.id, l.${k.ownerColumn}, l.${k.targetColumn}, l.created_by, ${iso('l.created_at')} AS created_at,
   l.updated_by, ${iso('l.updated_at')} AS updated_at`;

const specs = new Map<LinkKind, VersionedSpecs>();

/** The record spec of a link kind (the same fields in both presentations). */
export function linkSpecs(k: LinkKind): VersionedSpecs {
  let s = specs.get(k);
  if (!s) {
    s = defineVersionedRecord({
      name: `${k.table}:${k.ownerColumn}`,
      attributes: [
        { name: 'id', column: 'l.id', type: 'uuid' },
        { name: k.ownerColumn, column: `l.${k.ownerColumn}`, type: 'uuid' },
        { name: k.targetColumn, column: `l.${k.targetColumn}`, type: 'uuid' },
        ...auditAttributes('l'),
      ],
      children: { v1: [], v2: [] },
    });
    specs.set(k, s);
  }
  return s;
}

/** The role or group of a link and the other end, for the tenant rule. */
export function containerAndMember(k: LinkKind, owner: LinkEnd, target: LinkEnd): [LinkEnd, LinkEnd] {
  return k.container === 'owner' ? [owner, target] : [target, owner];
}

export type { GroupRow, RoleRow };
