import { Module } from '@nestjs/common';
import { VersionsController } from './versions.controller.js';
import { VersionsService } from './versions.service.js';

/** Tree versions under /api/v1/trees/:tree_code/versions. */
@Module({
  imports: [],
  controllers: [VersionsController],
  providers: [VersionsService],
  exports: [VersionsService],
})
export class VersionsModule {}
