import { Module } from '@nestjs/common';
import {
  addGroupToClosure,
  detachGroup,
  findGroup,
  GROUP_AGGREGATION_COLUMNS,
  GROUP_COLUMNS,
  groupsTable,
  lockNesting,
} from '@gatehouse/identity-data';
import { Db } from '@gatehouse/db';
import { namedController } from '../common/named.controller.js';
import { namedDtos } from '../common/named-dto.js';
import type { NamedKind, NamedRow } from '../common/named-records.js';
import { NamedService } from '../common/named.service.js';
import { GROUPS_READ, GROUPS_WRITE } from '../common/scopes.js';
import { embedChildren } from '../memberships/embed.js';
import { LINK_KINDS } from '../memberships/link-kinds.js';

/** Groups: users and nested groups that hold the group's roles and those of its ancestors. */
export const GROUP_KIND: NamedKind<NamedRow> = {
  noun: 'group',
  path: 'groups',
  table: groupsTable,
  columns: GROUP_COLUMNS,
  aggregationColumns: GROUP_AGGREGATION_COLUMNS,
  counts: ['members', 'roles', 'groups', 'parents'],
  children: ['members', 'roles', 'groups'],
  find: findGroup as NamedKind<NamedRow>['find'],
  conflicts: { ux_groups_name: 'A group with this group_name exists in the tenant' },
};

const GROUPS_SERVICE = Symbol('GROUPS_SERVICE');
const dtos = namedDtos(
  'group',
  { name: 'warehouse-staff', description: 'Staff of the warehouse' },
  GROUP_KIND.counts,
  GROUP_KIND.children,
);
const byTag = (tag: string) => LINK_KINDS.find((k) => k.tag === tag)!;

/** Groups under /api/v1 and /api/v2 (members, roles and nested groups: MembershipsModule). */
@Module({
  controllers: (['v1', 'v2'] as const).map((v) =>
    namedController(v, {
      kind: GROUP_KIND,
      service: GROUPS_SERVICE,
      read: GROUPS_READ,
      write: GROUPS_WRITE,
      tag: 'Groups',
      createDto: dtos.create,
      updateDto: dtos.update,
      doc: dtos.doc,
      deleteNote:
        'Its members, roles and nestings go with it (its child groups stay, un-nested); the scopes it gave are ' +
        'gone from the next token and from /tokeninfo of tokens already issued.',
    }),
  ),
  providers: [
    {
      provide: GROUPS_SERVICE,
      inject: [Db],
      useFactory: (db: Db) =>
        new NamedService(
          db,
          GROUP_KIND,
          embedChildren([
            { field: 'members', kind: byTag('Group Members') },
            { field: 'roles', kind: byTag('Group Roles') },
            { field: 'groups', kind: byTag('Nested Groups') },
          ]),
          async (tx, row) => {
            await lockNesting(tx, row.instance_id);
            await detachGroup(tx, row.id);
          },
          (tx, row) => addGroupToClosure(tx, row),
        ),
    },
  ],
})
export class GroupsModule {}
