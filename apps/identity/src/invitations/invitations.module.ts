import { Module } from '@nestjs/common';
import { TicketsModule } from '../tickets/tickets.module.js';
import { UsersService } from '../users/users.service.js';
import { invitationsController } from './invitations.controller.js';
import { InvitationsService } from './invitations.service.js';

/** User Registration (POST /users/invite) under /api/v1 and /api/v2. */
@Module({
  imports: [TicketsModule],
  controllers: [invitationsController('v1'), invitationsController('v2')],
  providers: [InvitationsService, UsersService],
})
export class InvitationsModule {}
