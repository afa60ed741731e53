import { Module } from '@nestjs/common';
import {
  clientPermissionsController,
  clientResourcesController,
  resourceClientsController,
} from './client-access.controllers.js';
import { ClientAccessService } from './client-access.service.js';

/** Client Resources, Client Permissions and Resource Clients under /api/v1 and /api/v2. */
@Module({
  controllers: [
    ...(['v1', 'v2'] as const).flatMap((v) => [
      clientResourcesController(v),
      clientPermissionsController(v),
      resourceClientsController(v),
    ]),
  ],
  providers: [ClientAccessService],
  exports: [ClientAccessService],
})
export class ClientAccessModule {}
