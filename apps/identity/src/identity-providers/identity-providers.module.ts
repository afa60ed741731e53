import { Module } from '@nestjs/common';
import { identityProvidersController } from './identity-providers.controller.js';
import { IdentityProvidersService } from './identity-providers.service.js';

/** Tenant Identity Providers under /api/v1 and /api/v2 (token exchange in apps/auth uses them). */
@Module({
  controllers: [identityProvidersController('v1'), identityProvidersController('v2')],
  providers: [IdentityProvidersService],
})
export class IdentityProvidersModule {}
