import { Module } from '@nestjs/common';
import { LINK_KINDS } from './link-kinds.js';
import { linkController, permissionController } from './memberships.controllers.js';
import { MembershipsService, PERMISSION_KINDS } from './memberships.service.js';

/**
 * Role Members, Role Permissions, Group Members, Group Roles, Nested Groups, User Permissions, User Roles and User
 * Groups under /api/v1 and /api/v2.
 */
@Module({
  controllers: (['v1', 'v2'] as const).flatMap((v) => [
    ...LINK_KINDS.map((k) => linkController(v, k)),
    ...PERMISSION_KINDS.map((k) => permissionController(v, k)),
  ]),
  providers: [MembershipsService],
  exports: [MembershipsService],
})
export class MembershipsModule {}
