import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { tenantAdminsController, tenantsController } from './tenants.controller.js';
import { TenantsService } from './tenants.service.js';

/** Tenants and Tenant Admins under /api/v1 and /api/v2. */
@Module({
  imports: [UsersModule],
  controllers: (['v1', 'v2'] as const).flatMap((v) => [tenantsController(v), tenantAdminsController(v)]),
  providers: [TenantsService],
})
export class TenantsModule {}
