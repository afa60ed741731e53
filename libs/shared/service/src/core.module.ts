import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** Injection token of the service's validated environment (`@Inject(SERVICE_ENV) env: EnvOf<typeof xEnv>`). */
export const SERVICE_ENV = Symbol('SERVICE_ENV');

/** Global module every app imports first: the already migrated DataSource (TypeORM repositories) and the env. */
@Module({})
export class ServiceCoreModule {
  static register(ctx: { env: unknown; dataSource: DataSource }): DynamicModule {
    return {
      module: ServiceCoreModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ctx.dataSource.options,
          dataSourceFactory: async () => ctx.dataSource,
        }),
      ],
      providers: [{ provide: SERVICE_ENV, useValue: ctx.env }],
      exports: [SERVICE_ENV],
    };
  }
}
