import { type DynamicModule, Module } from '@nestjs/common';
import { Db } from '@gatehouse/db';

/** Injection token of the service's validated environment (`@Inject(SERVICE_ENV) env: EnvOf<typeof xEnv>`). */
export const SERVICE_ENV = Symbol('SERVICE_ENV');

/** Global module every app imports first: the service's database (`Db`, already migrated) and its env. */
@Module({})
export class ServiceCoreModule {
  static register(ctx: { env: unknown; db: Db }): DynamicModule {
    return {
      module: ServiceCoreModule,
      global: true,
      providers: [
        { provide: SERVICE_ENV, useValue: ctx.env },
        { provide: Db, useValue: ctx.db },
      ],
      exports: [SERVICE_ENV, Db],
    };
  }
}
