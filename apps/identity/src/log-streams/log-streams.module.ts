import { Module } from '@nestjs/common';
import { LogStreamDelivery } from './log-stream.delivery.js';
import { logStreamsController } from './log-streams.controller.js';
import { LogStreamsService } from './log-streams.service.js';

/** Log Streams under /api/v1 and /api/v2, and their delivery worker. */
@Module({
  controllers: [logStreamsController('v1'), logStreamsController('v2')],
  providers: [LogStreamsService, LogStreamDelivery],
  exports: [LogStreamDelivery],
})
export class LogStreamsModule {}
