import { Module } from '@nestjs/common';
import {
  findRole,
  ROLE_AGGREGATION_COLUMNS,
  ROLE_COLUMNS,
  rolesTable,
  type RoleRow,
} from '@gatehouse/identity-data';
import { Db } from '@gatehouse/db';
import { namedController } from '../common/named.controller.js';
import { namedDtos } from '../common/named-dto.js';
import type { NamedKind, NamedRow } from '../common/named-records.js';
import { NamedService } from '../common/named.service.js';
import { ROLES_READ, ROLES_WRITE } from '../common/scopes.js';
import { embedChildren } from '../memberships/embed.js';
import { LINK_KINDS } from '../memberships/link-kinds.js';
import { PERMISSION_KINDS } from '../memberships/memberships.service.js';

/** Roles: a name unique in the tenant, the permissions it grants, the users and groups given it. */
export const ROLE_KIND: NamedKind<NamedRow> = {
  noun: 'role',
  path: 'roles',
  table: rolesTable,
  columns: ROLE_COLUMNS,
  aggregationColumns: ROLE_AGGREGATION_COLUMNS,
  counts: ['permissions', 'users', 'groups'],
  children: ['permissions', 'members', 'groups'],
  find: findRole as NamedKind<NamedRow>['find'],
  conflicts: { ux_roles_name: 'A role with this role_name exists in the tenant' },
};
export type { RoleRow };

const ROLES_SERVICE = Symbol('ROLES_SERVICE');
const dtos = namedDtos(
  'role',
  { name: 'order-admin', description: 'Manages orders' },
  ROLE_KIND.counts,
  ROLE_KIND.children,
);
const byTag = (tag: string) => LINK_KINDS.find((k) => k.tag === tag)!;

/** Roles under /api/v1 and /api/v2 (their permissions, members and groups: MembershipsModule). */
@Module({
  controllers: (['v1', 'v2'] as const).map((v) =>
    namedController(v, {
      kind: ROLE_KIND,
      service: ROLES_SERVICE,
      read: ROLES_READ,
      write: ROLES_WRITE,
      tag: 'Roles',
      createDto: dtos.create,
      updateDto: dtos.update,
      doc: dtos.doc,
      deleteNote:
        'Its permissions and its links to users and groups go with it; the scopes it gave are gone from the next ' +
        'token and from /tokeninfo of tokens already issued.',
    }),
  ),
  providers: [
    {
      provide: ROLES_SERVICE,
      inject: [Db],
      useFactory: (db: Db) =>
        new NamedService(
          db,
          ROLE_KIND,
          embedChildren([
            { field: 'permissions', kind: PERMISSION_KINDS[0], permission: true },
            { field: 'members', kind: byTag('Role Members') },
            { field: 'groups', kind: byTag('Role Groups') },
          ]),
        ),
    },
  ],
})
export class RolesModule {}
