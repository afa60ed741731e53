import { type DynamicModule, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { ServiceCoreModule, type CommonEnv, type ServiceContext } from '@gatehouse/service';
import type { EnvOf } from '@gatehouse/config';
import { BearerModule, bearerOptionsFromEnv } from '@gatehouse/bearer';
import { loadSecretBox, MANAGEMENT_AUDIENCE, SECRET_BOX } from '@gatehouse/identity-data';
import type { identityEnv } from './config.js';
import { AccessModule } from './common/access.js';
import { ChangeFeed, SettleInterceptor } from './common/changes.js';
import { AuditInterceptor, AuditSettings } from './common/audit.js';
import { EventHousekeeping } from './common/events-housekeeping.js';
import { ClientsModule } from './clients/clients.module.js';
import { ClientAccessModule } from './client-access/client-access.module.js';
import { ResourcesModule } from './resources/resources.module.js';
import { ScopesModule } from './scopes/scopes.module.js';
import { UsersModule } from './users/users.module.js';
import { RolesModule } from './roles/roles.module.js';
import { GroupsModule } from './groups/groups.module.js';
import { MembershipsModule } from './memberships/memberships.module.js';
import { TenantsModule } from './tenants/tenants.module.js';
import { IdentityProvidersModule } from './identity-providers/identity-providers.module.js';
import { UserIdentitiesModule } from './user-identities/user-identities.module.js';
import { UserAuthenticatorsModule } from './user-authenticators/user-authenticators.module.js';
import { InstancesModule } from './instances/instances.module.js';
import { TicketsModule } from './tickets/tickets.module.js';
import { InvitationsModule } from './invitations/invitations.module.js';
import { UserGrantsModule } from './user-grants/user-grants.module.js';
import { LogStreamsModule } from './log-streams/log-streams.module.js';
import { LogsModule } from './logs/logs.module.js';

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
        AccessModule,
        ClientsModule,
        ClientAccessModule,
        ResourcesModule,
        ScopesModule,
        UsersModule,
        RolesModule,
        GroupsModule,
        MembershipsModule,
        TenantsModule,
        IdentityProvidersModule,
        UserIdentitiesModule,
        UserAuthenticatorsModule,
        InstancesModule,
        TicketsModule,
        InvitationsModule,
        UserGrantsModule,
        LogStreamsModule,
        LogsModule,
      ],
      // Client secrets are sealed with this box (SECRET_ENCRYPTION_KEY or DATA_DIR/secret.key, see bootstrap).
      // The ChangeFeed keeps the caller and token caches of this replica in step with changes made by any replica;
      // the SettleInterceptor holds the response of a change until every token server replica has applied it.
      providers: [
        { provide: SECRET_BOX, useFactory: () => loadSecretBox(env).box },
        ChangeFeed,
        EventHousekeeping,
        // Every transaction of a management request carries its audit context: the events_audit trigger of each
        // management table records the write in the same transaction (docs/events.md "Management writes").
        AuditSettings,
        { provide: APP_INTERCEPTOR, useClass: SettleInterceptor },
        { provide: APP_INTERCEPTOR, useClass: AuditInterceptor },
      ],
      exports: [SECRET_BOX],
    };
  }
}
