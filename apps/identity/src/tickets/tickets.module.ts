import { Module } from '@nestjs/common';
import { Mailer } from './mailer.js';
import { ticketsController } from './tickets.controller.js';
import { TicketsService } from './tickets.service.js';

/** Tickets under /api/v1 and /api/v2; TicketsService and the Mailer serve User Registration too. */
@Module({
  controllers: [ticketsController('v1'), ticketsController('v2')],
  providers: [TicketsService, Mailer],
  exports: [TicketsService, Mailer],
})
export class TicketsModule {}
