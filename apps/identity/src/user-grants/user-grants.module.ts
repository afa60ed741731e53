import { Module } from '@nestjs/common';
import { userGrantsController } from './user-grants.controller.js';
import { UserGrantsService } from './user-grants.service.js';

/** User Grants under /api/v1 and /api/v2. */
@Module({
  controllers: [userGrantsController('v1'), userGrantsController('v2')],
  providers: [UserGrantsService],
})
export class UserGrantsModule {}
