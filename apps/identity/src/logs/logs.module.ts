import { Module } from '@nestjs/common';
import { logsControllers } from './logs.controller.js';
import { LogsService } from './logs.service.js';

/** The audit trail under /api/v1 and /api/v2: GET /logs, GET /logs/:log_id, GET /users/:user_id/logs. */
@Module({
  controllers: [...logsControllers('v1'), ...logsControllers('v2')],
  providers: [LogsService],
})
export class LogsModule {}
