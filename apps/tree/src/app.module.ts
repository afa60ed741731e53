import { type DynamicModule, Module } from '@nestjs/common';
import { BearerModule, bearerOptionsFromEnv } from '@gatehouse/bearer';
import { ServiceCoreModule, type ServiceContext } from '@gatehouse/service';
import type { EnvOf } from '@gatehouse/config';
import type { treeEnv } from './config.js';
import { IDENTITY_CHANGES_URL, TreeChangeFeed } from './common/change-feed.js';
import { TREE_AUDIENCE } from './common/scopes.js';
import { CsvModule } from './csv/csv.module.js';
import { HealthModule } from './health/health.module.js';
import { NodesModule } from './nodes/nodes.module.js';
import { SettingsModule } from './settings/settings.module.js';
import { TranslationsModule } from './translations/translations.module.js';
import { TreesModule } from './trees/trees.module.js';
import { VersionsModule } from './versions/versions.module.js';

/** One module per feature, as in apps/identity (controllers, service, DTOs and records in its folder). */
const FEATURE_MODULES = [
  TreesModule,
  VersionsModule,
  NodesModule,
  TranslationsModule,
  CsvModule,
  SettingsModule,
  HealthModule,
];

@Module({})
export class TreeAppModule {
  static register(ctx: ServiceContext<EnvOf<typeof treeEnv>>): DynamicModule {
    return {
      module: TreeAppModule,
      imports: [
        ServiceCoreModule.register(ctx),
        // Trees belong to an instance: a token whose /tokeninfo answer does not name its instance is refused (401).
        BearerModule.forRoot({ ...bearerOptionsFromEnv(ctx.env, TREE_AUDIENCE), requireInstance: true }),
        ...FEATURE_MODULES,
      ],
      providers: [
        // Cached token checks follow the identity service's changes (its database: DATABASE_URL).
        { provide: IDENTITY_CHANGES_URL, useValue: ctx.env.DATABASE_URL },
        TreeChangeFeed,
      ],
    };
  }
}
