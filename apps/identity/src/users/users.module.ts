import { Module } from '@nestjs/common';
import { usersController } from './users.controller.js';
import { UsersService } from './users.service.js';

/** Users under /api/v1 and /api/v2. */
@Module({
  controllers: [usersController('v1'), usersController('v2')],
  providers: [UsersService],
  exports: [UsersService],
})
export class UsersModule {}
