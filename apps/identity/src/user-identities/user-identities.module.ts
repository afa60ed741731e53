import { Module } from '@nestjs/common';
import { userIdentitiesController } from './user-identities.controller.js';
import { UserIdentitiesService } from './user-identities.service.js';

/** User Identities under /api/v1 and /api/v2. */
@Module({
  controllers: [userIdentitiesController('v1'), userIdentitiesController('v2')],
  providers: [UserIdentitiesService],
})
export class UserIdentitiesModule {}
