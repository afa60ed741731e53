import { Module } from '@nestjs/common';
import { VersionsModule } from '../versions/versions.module.js';
import { TreesController } from './trees.controller.js';
import { TreesService } from './trees.service.js';

/** Trees under /api/v1/trees (a new tree gets its first version through VersionsService). */
@Module({
  imports: [VersionsModule],
  controllers: [TreesController],
  providers: [TreesService],
  exports: [TreesService],
})
export class TreesModule {}
