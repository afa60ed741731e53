import { Module } from '@nestjs/common';
import { scopesController } from './scopes.controller.js';
import { ScopesService } from './scopes.service.js';

/** Resource Scopes under /api/v1 and /api/v2. */
@Module({
  controllers: [scopesController('v1'), scopesController('v2')],
  providers: [ScopesService],
})
export class ScopesModule {}
