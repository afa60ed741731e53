import { Module } from '@nestjs/common';
import { clientsController } from './clients.controller.js';
import { ClientsService } from './clients.service.js';

/** Clients under /api/v1 and /api/v2. */
@Module({
  controllers: [clientsController('v1'), clientsController('v2')],
  providers: [ClientsService],
  exports: [ClientsService],
})
export class ClientsModule {}
