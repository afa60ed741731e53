import { type DynamicModule, Module } from '@nestjs/common';
import { ServiceCoreModule, type ServiceContext } from '@gatehouse/service';
import type { EnvOf } from '@gatehouse/config';
import type { authEnv } from './config.js';

@Module({})
export class AuthAppModule {
  static register(ctx: ServiceContext<EnvOf<typeof authEnv>>): DynamicModule {
    return {
      module: AuthAppModule,
      imports: [ServiceCoreModule.register(ctx)],
    };
  }
}
