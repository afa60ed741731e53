import { Module } from '@nestjs/common';
import { userAuthenticatorsController } from './user-authenticators.controller.js';
import { UserAuthenticatorsService } from './user-authenticators.service.js';

/** User Authenticators (second factors) under /api/v1 and /api/v2. */
@Module({
  controllers: [userAuthenticatorsController('v1'), userAuthenticatorsController('v2')],
  providers: [UserAuthenticatorsService],
})
export class UserAuthenticatorsModule {}
