import { type DynamicModule, Module } from '@nestjs/common';
import { ServiceCoreModule, type ServiceContext } from '@gatehouse/service';
import type { EnvOf } from '@gatehouse/config';
import type { identityEnv } from './config.js';

@Module({})
export class IdentityAppModule {
  static register(ctx: ServiceContext<EnvOf<typeof identityEnv>>): DynamicModule {
    return {
      module: IdentityAppModule,
      imports: [ServiceCoreModule.register(ctx)],
    };
  }
}
