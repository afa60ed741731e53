import { type DynamicModule, Module } from '@nestjs/common';
import { ServiceCoreModule, type CommonEnv, type ServiceContext } from '@gatehouse/service';
import type { EnvOf } from '@gatehouse/config';
import { BearerModule, bearerOptionsFromEnv } from '@gatehouse/bearer';
import { loadSecretBox, MANAGEMENT_AUDIENCE, SECRET_BOX } from '@gatehouse/identity-data';
import type { identityEnv } from './config.js';

@Module({})
export class IdentityAppModule {
  static register(ctx: ServiceContext<EnvOf<typeof identityEnv>>): DynamicModule {
    const env = ctx.env as typeof ctx.env & CommonEnv;
    return {
      module: IdentityAppModule,
      global: true,
      imports: [
        ServiceCoreModule.register(ctx),
        // Every route not marked @Public() needs a management-API token (audience urn:gatehouse:management),
        // validated through the token server's /tokeninfo, plus the scopes of its @Scopes().
        BearerModule.forRoot(bearerOptionsFromEnv(env, MANAGEMENT_AUDIENCE)),
      ],
      // Client secrets are sealed with this box (SECRET_ENCRYPTION_KEY or DATA_DIR/secret.key, see bootstrap).
      providers: [{ provide: SECRET_BOX, useFactory: () => loadSecretBox(env).box }],
      exports: [SECRET_BOX],
    };
  }
}
