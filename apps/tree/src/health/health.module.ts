import { Module } from '@nestjs/common';
import { TreeHealthController } from './health.controller.js';
import { HealthService } from './health.service.js';

/** The tree API's own health report under /api/v1/health. */
@Module({
  imports: [],
  controllers: [TreeHealthController],
  providers: [HealthService],
  exports: [HealthService],
})
export class HealthModule {}
