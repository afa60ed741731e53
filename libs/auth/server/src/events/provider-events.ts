import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { EventActor } from '@gatehouse/identity-data';
import { exchangedIssuerOf, exchangedTenantOf, TOKEN_EXCHANGE_GRANT } from '../oidc/token-exchange.grant.js';
import { sourceOf, type AuthEvents } from './auth-events.js';

/** What the events need of oidc-provider's client (our extra metadata). */
interface ClientOf {
  clientId: string;
  instance_id?: string;
  tenant_id?: string | null;
}

/** A token, code or session as oidc-provider's entities hold them (the fields read here only). */
interface EntityOf {
  clientId?: string;
  accountId?: string;
  grantId?: string;
  error?: string;
  kind?: string;
}

/** The account a user's instance is looked up by when a logout names no client. */
export type InstanceOfUser = (
  userId: string,
) => Promise<{ instanceId: string; tenantId: string | null } | undefined>;

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** The resource a token request named (a single value), for `details.audience`. */
function audienceOf(ctx: KoaContextWithOIDC): string | undefined {
  const r = ctx.oidc.params?.resource;
  return typeof r === 'string' ? r.slice(0, 500) : undefined;
}

function entities(ctx: KoaContextWithOIDC): Record<string, EntityOf | undefined> {
  return ctx.oidc.entities as unknown as Record<string, EntityOf | undefined>;
}

function accountOf(ctx: KoaContextWithOIDC): string | undefined {
  const e = entities(ctx);
  return (
    str((ctx.oidc.account as { accountId?: string } | undefined)?.accountId) ??
    e.AccessToken?.accountId ??
    e.RefreshToken?.accountId ??
    e.AuthorizationCode?.accountId ??
    e.DeviceCode?.accountId
  );
}

function actorOf(client: ClientOf, userId: string | undefined, person = false): EventActor {
  if (userId) return { type: 'user', id: userId, viaClientId: client.clientId };
  return person
    ? { type: 'anonymous', viaClientId: client.clientId }
    : { type: 'client', id: client.clientId };
}

/**
 * The audit events oidc-provider's own endpoints cause, taken from its events (`grant.success`, `grant.error`,
 * `grant.revoked`, `end_session.success`) and, where it emits none, from the request's entities once it answered
 * (revocation, device approvals and denials). Registered on every provider built (one per key set).
 */
export function auditProvider(provider: Provider, events: AuthEvents, instanceOfUser: InstanceOfUser): void {
  const common = (ctx: KoaContextWithOIDC, client: ClientOf, userId: string | undefined, person = false) => {
    const src = sourceOf(ctx.req);
    return {
      instanceId: String(client.instance_id),
      tenantId: exchangedTenantOf(ctx) ?? client.tenant_id ?? null,
      actor: actorOf(client, userId, person),
      userId: userId ?? null,
      clientId: client.clientId,
      ip: src.ip,
      userAgent: src.userAgent,
    };
  };

  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    const client = ctx.oidc.client as unknown as ClientOf | undefined;
    if (!client) return;
    const grantType = String(ctx.oidc.params?.grant_type);
    const exchange = grantType === TOKEN_EXCHANGE_GRANT;
    events.record({
      ...common(ctx, client, accountOf(ctx)),
      type: exchange ? 'token.exchanged' : 'token.issued',
      details: {
        grant_type: grantType,
        ...(audienceOf(ctx) ? { audience: audienceOf(ctx) } : {}),
        ...(exchange ? { upstream_issuer: exchangedIssuerOf(ctx) ?? null } : {}),
      },
    });
  });

  provider.on(
    'grant.error',
    (ctx: KoaContextWithOIDC, err: { error?: string; error_description?: string; error_detail?: string }) => {
      const client = ctx.oidc?.client as unknown as ClientOf | undefined;
      // no client (an unknown client_id): no instance to record it in
      if (!client?.instance_id) return;
      const grantType = str(ctx.oidc.params?.grant_type)?.slice(0, 100) ?? null;
      const userId = accountOf(ctx);
      const base = common(ctx, client, userId);
      const details = {
        grant_type: grantType,
        ...(audienceOf(ctx) ? { audience: audienceOf(ctx) } : {}),
        ...(grantType === TOKEN_EXCHANGE_GRANT ? { upstream_issuer: exchangedIssuerOf(ctx) ?? null } : {}),
        description: str(err.error_description)?.slice(0, 300) ?? null,
        // oidc-provider's fixed descriptions leave the cause here ('refresh token already used', 'PKCE ...')
        ...(str(err.error_detail) ? { detail: str(err.error_detail)!.slice(0, 300) } : {}),
      };
      events.record({ ...base, type: 'token.failure', reason: str(err.error) ?? 'server_error', details });
      // oidc-provider revokes the whole grant of a rotated refresh token used again (it answers invalid_grant)
      if (grantType === 'refresh_token' && err.error_detail === 'refresh token already used') {
        events.record({
          ...base,
          type: 'refresh_token.reuse',
          reason: 'reused',
          details: { grant_id: entities(ctx).RefreshToken?.grantId ?? null },
        });
      }
    },
  );

  provider.on('grant.revoked', (ctx: KoaContextWithOIDC, grantId: string) => {
    // the revocation endpoint's own event names the token too (below)
    if (ctx.oidc.route === 'revocation') return;
    const client = ctx.oidc.client as unknown as ClientOf | undefined;
    if (!client?.instance_id) return;
    events.record({
      ...common(ctx, client, accountOf(ctx) ?? str(ctx.oidc.session?.accountId)),
      type: 'token.revoked',
      details: { grant_id: grantId, route: ctx.oidc.route },
    });
  });

  provider.on('end_session.success', (ctx: KoaContextWithOIDC) => {
    const client = ctx.oidc.client as unknown as ClientOf | undefined;
    const userId = str(ctx.oidc.session?.accountId);
    const src = sourceOf(ctx.req);
    const record = (instanceId: string, tenantId: string | null) =>
      events.record({
        type: 'logout',
        instanceId,
        tenantId,
        actor: userId
          ? { type: 'user', id: userId, viaClientId: client?.clientId ?? null }
          : { type: 'anonymous', viaClientId: client?.clientId ?? null },
        userId: userId ?? null,
        clientId: client?.clientId ?? null,
        ip: src.ip,
        userAgent: src.userAgent,
      });
    if (client?.instance_id) return record(client.instance_id, client.tenant_id ?? null);
    // a logout that names no client: the instance is the user's
    if (userId) {
      void instanceOfUser(userId)
        .then((u) => u && record(u.instanceId, u.tenantId))
        .catch(() => undefined);
    }
  });

  provider.use(async (koa, next) => {
    await next();
    const ctx = koa as KoaContextWithOIDC;
    const route = ctx.oidc?.route;
    if (route === 'revocation') {
      const client = ctx.oidc.client as unknown as ClientOf | undefined;
      const e = entities(ctx);
      const token = e.AccessToken ?? e.RefreshToken ?? e.ClientCredentials;
      // revoked: a token of this client (RFC 7009: another client's is left alone, answered 200 all the same)
      if (ctx.status !== 200 || !client?.instance_id || !token || token.clientId !== client.clientId) return;
      events.record({
        ...common(ctx, client, token.accountId),
        type: 'token.revoked',
        details: { token_type: token.kind ?? null, route },
      });
    } else if (route === 'code_verification' || route === 'device_resume') {
      let code = entities(ctx).DeviceCode;
      // a consent denied: the resume fails before the code is an entity; oidc-provider marked the stored code
      const pending = (entities(ctx).Interaction as { deviceCode?: string } | undefined)?.deviceCode;
      if (!code && route === 'device_resume' && pending) {
        // as oidc-provider reads it there (its types lack ignoreSessionBinding)
        const opts = { ignoreExpiration: true, ignoreSessionBinding: true } as { ignoreExpiration: boolean };
        code = (await provider.DeviceCode.find(pending, opts).catch(() => undefined)) as EntityOf | undefined;
      }
      if (!code?.clientId) return;
      const denied = code.error === 'access_denied';
      if (!denied && !(route === 'device_resume' && code.accountId && !code.error)) return;
      const client = (await provider.Client.find(code.clientId).catch(() => undefined)) as unknown as
        ClientOf | undefined;
      if (!client?.instance_id) return;
      events.record({
        ...common(ctx, client, code.accountId ?? str(ctx.oidc.session?.accountId), true),
        type: denied ? 'device.denied' : 'device.approved',
        details: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code' },
      });
    }
  });
}
