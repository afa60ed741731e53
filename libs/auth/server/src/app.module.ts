import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { ServiceCoreModule, type CommonEnv, type ServiceContext } from '@gatehouse/service';
import type { EnvOf } from '@gatehouse/config';
import { createLogger } from '@gatehouse/http';
import { loadSecretBox, SECRET_BOX, type SecretBox } from '@gatehouse/identity-data';
import type { authEnv } from './config.js';
import { OAuthDocsController } from './oauth-docs.controller.js';
import { TokenServer } from './token-server.js';

@Injectable()
class TokenServerLifecycle implements OnApplicationShutdown {
  constructor(@Inject(TokenServer) private readonly server: TokenServer) {}

  async onApplicationShutdown(): Promise<void> {
    await this.server.close();
  }
}

@Module({})
export class AuthAppModule {
  static register(ctx: ServiceContext<EnvOf<typeof authEnv>>): DynamicModule {
    const env = ctx.env as typeof ctx.env & CommonEnv;
    return {
      module: AuthAppModule,
      imports: [ServiceCoreModule.register(ctx)],
      controllers: [OAuthDocsController],
      providers: [
        // Client secrets, resource secrets and signing keys are sealed with this box (see bootstrap).
        { provide: SECRET_BOX, useFactory: () => loadSecretBox(env).box },
        {
          provide: TokenServer,
          inject: [SECRET_BOX],
          useFactory: (box: SecretBox) =>
            TokenServer.start({
              env,
              db: ctx.db,
              box,
              log: createLogger({ serviceName: 'auth', level: env.LOG_LEVEL }),
            }),
        },
        TokenServerLifecycle,
      ],
      exports: [TokenServer, SECRET_BOX],
    };
  }
}
