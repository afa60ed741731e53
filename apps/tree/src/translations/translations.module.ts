import { Module } from '@nestjs/common';
import {
  NodeTranslationsController,
  TreeTranslationsController,
  VersionTranslationsController,
} from './translations.controller.js';
import { TranslationsService } from './translations.service.js';

/** Translations of trees, versions and nodes. */
@Module({
  imports: [],
  controllers: [TreeTranslationsController, VersionTranslationsController, NodeTranslationsController],
  providers: [TranslationsService],
  exports: [TranslationsService],
})
export class TranslationsModule {}
