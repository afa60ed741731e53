import { Module } from '@nestjs/common';
import { UsersService } from '../users/users.service.js';
import { instancesController } from './instances.controller.js';
import { InstancesService } from './instances.service.js';
import { MultiInstanceGuard } from './multi-instance.guard.js';

/** Instances and Instance Admins under /api/v1 and /api/v2 (multi-instance mode). */
@Module({
  controllers: [instancesController('v1'), instancesController('v2')],
  // The admins list answers User records exactly as Get a user does.
  providers: [InstancesService, UsersService, MultiInstanceGuard],
})
export class InstancesModule {}
