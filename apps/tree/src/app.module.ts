import { type DynamicModule, Module } from '@nestjs/common';
import { ServiceCoreModule, type ServiceContext } from '@gatehouse/service';
import type { EnvOf } from '@gatehouse/config';
import type { treeEnv } from './config.js';

@Module({})
export class TreeAppModule {
  static register(ctx: ServiceContext<EnvOf<typeof treeEnv>>): DynamicModule {
    return {
      module: TreeAppModule,
      imports: [ServiceCoreModule.register(ctx)],
    };
  }
}
