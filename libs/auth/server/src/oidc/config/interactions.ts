import { interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { pkceWaived } from '../../passwordless/link-pkce.js';
import { INTERACTION_PATH } from '../../interaction/pages.js';
import type { OidcData } from '../oidc-data.js';
import { ACR_MFA, ACR_VALUES, mfaNeed, type SecondFactors } from '../../mfa/second-factors.js';
import { OIDC_SCOPES } from './claims.js';
import type { GatehouseClient } from './client.js';

/** The MFA acr asked for by `acr_values` (step-up). */
export function asksForMfa(params: Record<string, unknown> | undefined): boolean {
  const v = params?.acr_values;
  return typeof v === 'string' && v.split(' ').includes(ACR_MFA);
}

/**
 * oidc-provider's prompts, plus one login check: a session whose user this client may not sign in (a user of another
 * instance or tenant: findAccount finds no account) is no login here. The login page is shown again (prompt=none:
 * login_required) instead of the request failing for want of an account.
 *
 * Between login and consent, the `mfa` prompt (not requestable: `prompt=none` answers `interaction_required`): a
 * session signed in with one factor whose user needs a second one here (mfaNeed: the effective policy of this client,
 * the user's TOTP, `acr_values` asking for the MFA acr) is asked for it, or enrols one. A session whose acr is
 * already the MFA one is not asked again (single sign-on keeps the second factor, as it keeps the first).
 */
function signInPolicy(data: OidcData, mfa: SecondFactors) {
  const policy = interactionPolicy.base();
  policy
    .get('login')!
    .checks.add(
      new interactionPolicy.Check(
        'session_elsewhere',
        "the session's user does not sign in through this client",
        'login_required',
        (ctx) => Boolean(ctx.oidc.session?.accountId && !ctx.oidc.account),
      ),
      1,
    );
  policy.add(
    new interactionPolicy.Prompt(
      { name: 'mfa', requestable: false },
      new interactionPolicy.Check(
        'mfa_required',
        'a second factor is required',
        'interaction_required',
        async (ctx) => {
          const { session, account, client } = ctx.oidc;
          if (!session?.accountId || !account || !client || session.acr === ACR_MFA) return false;
          const state = await data.mfaState(client.clientId, session.accountId, () =>
            mfa.state(client.clientId, session.accountId!),
          );
          return mfaNeed(state, asksForMfa(ctx.oidc.params)) !== undefined;
        },
      ),
    ),
    1,
  );
  return policy;
}

/**
 * A code request asking for `offline_access` keeps it whenever the client may use refresh tokens, with or without
 * `prompt=consent` (Auth0's rule; oidc-provider drops it unless consent is prompted for). The consent page then asks
 * for it like any other scope unless the grant already holds it. Not with `prompt=none`: no page can ask there, so
 * oidc-provider's rule stays. Runs after oidc-provider's scope checks, as the validator of the `scope` parameter.
 */
async function keepOfflineAccess(ctx: KoaContextWithOIDC, value: string | undefined): Promise<void> {
  const { oidc } = ctx;
  if (oidc.route !== 'authorization' || !oidc.client) return;
  const raw = (oidc.body as { scope?: unknown } | undefined)?.scope ?? ctx.query.scope;
  const asked = typeof raw === 'string' ? raw.split(' ') : [];
  const scopes = value ? value.split(' ') : [];
  if (!asked.includes('offline_access') || scopes.includes('offline_access')) return;
  const responseType = String(oidc.params?.response_type ?? '');
  const allowList = oidc.client.scope ? oidc.client.scope.split(' ') : undefined;
  if (
    !responseType.split(' ').includes('code') ||
    oidc.prompts.has('none') ||
    !oidc.client.grantTypeAllowed('refresh_token') ||
    (allowList && !allowList.includes('offline_access'))
  )
    return;
  oidc.params!.scope = [...scopes, 'offline_access'].join(' ');
}

/** Consent a first-party client need not ask: every resource it asks for skips consent for first parties. */
function loadExistingGrant(data: OidcData): NonNullable<Configuration['loadExistingGrant']> {
  return async (ctx) => {
    const client = ctx.oidc.client as unknown as GatehouseClient | undefined;
    const session = ctx.oidc.session;
    if (!client || !session?.accountId) return undefined;
    const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    if (!client.is_first_party) return undefined;
    const resources = ctx.oidc.params?.resource;
    const list = (Array.isArray(resources) ? resources : resources ? [resources] : []) as string[];
    const access = await Promise.all(list.map((r) => data.resourceAccess(client.clientId, r)));
    if (access.some((a) => !a?.authorized || !a.resource.skipConsentForFirstParty)) return undefined;
    const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
    const requested = String(ctx.oidc.params?.scope ?? '')
      .split(' ')
      .filter(Boolean);
    grant.addOIDCScope(requested.filter((sc) => (OIDC_SCOPES as readonly string[]).includes(sc)).join(' '));
    for (const [i, r] of list.entries()) grant.addResourceScope(r, access[i]!.scopes.join(' '));
    await grant.save();
    return grant;
  };
}

/** The authorization endpoint's rules: PKCE, our login and consent pages, offline_access, first-party consent. */
export const interactionsConfig = (
  data: OidcData,
  mfa: SecondFactors,
): Pick<Configuration, 'pkce' | 'interactions' | 'extraParams' | 'loadExistingGrant' | 'acrValues'> => ({
  // PKCE (S256) on every authorization code request, public clients or not (OAuth 2.1, RFC 9700), except the
  // request a confirmed sign-in link of a confidential client continues (document 2's link: link-pkce.ts).
  pkce: { required: (ctx, client) => !(client.clientAuthMethod !== 'none' && pkceWaived(ctx.req)) },
  interactions: {
    policy: signInPolicy(data, mfa),
    url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}`,
  },
  // offline_access without prompt=consent: kept (see keepOfflineAccess); the validator runs after oidc-provider's
  // own scope checks, on the parameter it already knows.
  extraParams: { scope: keepOfflineAccess },
  loadExistingGrant: loadExistingGrant(data),
  // discovery's acr_values_supported; the acr of a sign-in is set by the interaction that ends it (ACR_PWD, ACR_MFA)
  acrValues: [...ACR_VALUES],
});
