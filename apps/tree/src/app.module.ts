import { type DynamicModule, Module } from '@nestjs/common';
import { BearerModule, bearerOptionsFromEnv } from '@gatehouse/bearer';
import { ServiceCoreModule, type ServiceContext } from '@gatehouse/service';
import type { EnvOf } from '@gatehouse/config';
import type { treeEnv } from './config.js';
import { IDENTITY_CHANGES_URL, TreeChangeFeed } from './common/change-feed.js';
import { TREE_AUDIENCE } from './common/scopes.js';
import { CsvController } from './csv/csv.controller.js';
import { CsvService } from './csv/csv.service.js';
import { TreeHealthController } from './health/health.controller.js';
import { HealthService } from './health/health.service.js';
import { NodesController } from './nodes/nodes.controller.js';
import { NodesService } from './nodes/nodes.service.js';
import { SettingsController } from './settings/settings.controller.js';
import { SettingsService } from './settings/settings.service.js';
import {
  NodeTranslationsController,
  TreeTranslationsController,
  VersionTranslationsController,
} from './translations/translations.controller.js';
import { TranslationsService } from './translations/translations.service.js';
import { TreesController } from './trees/trees.controller.js';
import { TreesService } from './trees/trees.service.js';
import { VersionsController } from './versions/versions.controller.js';
import { VersionsService } from './versions/versions.service.js';

/** Controllers under /api/v1/trees. */
const TREE_CONTROLLERS = [
  TreesController,
  VersionsController,
  NodesController,
  TreeTranslationsController,
  VersionTranslationsController,
  NodeTranslationsController,
  CsvController,
];

@Module({})
export class TreeAppModule {
  static register(ctx: ServiceContext<EnvOf<typeof treeEnv>>): DynamicModule {
    return {
      module: TreeAppModule,
      imports: [
        ServiceCoreModule.register(ctx),
        BearerModule.forRoot(bearerOptionsFromEnv(ctx.env, TREE_AUDIENCE)),
      ],
      controllers: [...TREE_CONTROLLERS, SettingsController, TreeHealthController],
      providers: [
        TreesService,
        VersionsService,
        NodesService,
        TranslationsService,
        CsvService,
        SettingsService,
        HealthService,
        // Cached token checks follow the identity service's changes (its database: DATABASE_URL).
        { provide: IDENTITY_CHANGES_URL, useValue: ctx.env.DATABASE_URL },
        TreeChangeFeed,
      ],
    };
  }
}
