import { randomBytes } from 'node:crypto';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import {
  accountLabel,
  deviceCodePage,
  deviceConfirmPage,
  deviceDonePage,
  errorPage,
  loggedOutPage,
  logoutPage,
  originOf,
  pageHeaders,
  pickLocale,
} from '../../interaction/pages.js';
import { browserError } from '../browser-errors.js';
import { withCommonShape } from '../oauth-errors.js';
import type { OidcData } from '../oidc-data.js';

type Features = NonNullable<Configuration['features']>;

/** A page's nonce, with our pages' headers set; the answer is HTML. */
function startPage(ctx: KoaContextWithOIDC, formTargets?: string[]): string {
  const nonce = randomBytes(16).toString('base64');
  pageHeaders(ctx.res, nonce, formTargets);
  ctx.type = 'html';
  return nonce;
}

const browserLocale = (ctx: KoaContextWithOIDC) => pickLocale(undefined, ctx.get('accept-language'));

/** The pages of the device flow (RFC 8628): enter the code, confirm it, done. */
export const devicePages = (): Pick<
  NonNullable<Features['deviceFlow']>,
  'userCodeInputSource' | 'userCodeConfirmSource' | 'successSource'
> => ({
  userCodeInputSource: async (ctx, form, _out, err) => {
    const nonce = startPage(ctx);
    const e = err as { userCode?: unknown; name?: string } | undefined;
    ctx.body = deviceCodePage({
      locale: browserLocale(ctx),
      nonce,
      form,
      // a deliberate cancel is no failure: said so, neutrally
      error: e
        ? e.name === 'AbortedError'
          ? 'cancelled'
          : e.userCode || e.name === 'NoCodeError'
            ? 'wrong'
            : 'failed'
        : undefined,
    });
  },
  userCodeConfirmSource: async (ctx, form, client, _deviceInfo, userCode) => {
    const nonce = startPage(ctx);
    ctx.body = deviceConfirmPage({
      locale: browserLocale(ctx),
      nonce,
      form,
      clientName: client.clientName ?? client.clientId,
      userCode,
    });
  },
  successSource: async (ctx) => {
    const nonce = startPage(ctx);
    ctx.body = deviceDonePage({ locale: browserLocale(ctx), nonce });
  },
});

/** The pages of RP-initiated logout: confirm (naming the application and the account), signed out. */
export const logoutPages = (
  data: OidcData,
): Pick<NonNullable<Features['rpInitiatedLogout']>, 'logoutSource' | 'postLogoutSuccessSource'> => ({
  logoutSource: async (ctx, form) => {
    const target = String(ctx.oidc.params?.post_logout_redirect_uri ?? '');
    const nonce = startPage(ctx, originOf(target));
    const locale = pickLocale(String(ctx.oidc.params?.ui_locales ?? ''), ctx.get('accept-language'));
    // the page names what ends: the application (from id_token_hint or client_id) and the signed-in account
    const accountId = ctx.oidc.session?.accountId;
    const user = accountId ? await data.findUserById(accountId) : undefined;
    ctx.body = logoutPage({
      locale,
      nonce,
      form,
      clientName: ctx.oidc.client ? (ctx.oidc.client.clientName ?? undefined) : undefined,
      account: user ? accountLabel(user) : undefined,
    });
  },
  postLogoutSuccessSource: async (ctx) => {
    const nonce = startPage(ctx);
    ctx.body = loggedOutPage({ locale: browserLocale(ctx), nonce });
  },
});

export type Warn = (obj: object, msg: string) => void;

/**
 * A browser (Accept: text/html) gets a page, never JSON; clients get the OAuth error object. A person never reads
 * oidc-provider's developer message: the page says what to do, with a reference to the logged detail
 * (browser-errors.ts).
 */
export function renderError(warn: Warn): NonNullable<Configuration['renderError']> {
  return async (ctx, out, err) => {
    if (ctx.accepts('json', 'html') === 'html') {
      const locale = pickLocale(String(ctx.oidc?.params?.ui_locales ?? ''), ctx.get('accept-language'));
      const nonce = startPage(ctx);
      const shown = browserError(locale, out, err);
      if (shown.logged) {
        const clientId = ctx.oidc?.client?.clientId ?? ctx.oidc?.params?.client_id;
        warn({ ...shown.logged, client_id: clientId, path: ctx.path }, 'browser flow error');
      }
      ctx.body = errorPage({ locale, nonce, message: shown.message, details: shown.details });
      return;
    }
    ctx.type = 'json';
    ctx.body = withCommonShape(out);
  };
}
