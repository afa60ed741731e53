import { Module } from '@nestjs/common';
import { resourcesController } from './resources.controller.js';
import { ResourcesService } from './resources.service.js';

/** Resources under /api/v1 and /api/v2. */
@Module({
  controllers: [resourcesController('v1'), resourcesController('v2')],
  providers: [ResourcesService],
  exports: [ResourcesService],
})
export class ResourcesModule {}
