import { Module } from '@nestjs/common';
import { NodesController } from './nodes.controller.js';
import { NodesService } from './nodes.service.js';

/** Tree nodes under /api/v1/trees/:tree_code/versions/:tree_version/nodes. */
@Module({
  imports: [],
  controllers: [NodesController],
  providers: [NodesService],
  exports: [NodesService],
})
export class NodesModule {}
