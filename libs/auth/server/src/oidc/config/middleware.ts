import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { isStoreUnavailable, withCommonShape } from '../oauth-errors.js';
import { browserFacing } from './routes.js';

/** CSP of the pages oidc-provider renders: no sources at all but the form_post script's hash, no framing. */
const OIDC_PAGE_CSP = "default-src 'none'; script-src; base-uri 'none'; frame-ancestors 'none'";

export interface ProviderLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * The pages oidc-provider renders itself on the browser-facing routes (form_post auto-submit, errors, the device
 * and logout steps) get the headers of our own pages. Ours replace this CSP with their own (pageHeaders); the
 * form_post page adds the SHA-256 of its one inline script to the empty script-src (pushInlineSha), so that script
 * runs and nothing else does. No form-action: form_post submits to the client's redirect_uri, any origin.
 */
export function usePageHeaders(provider: Provider): void {
  provider.use(async (ctx, next) => {
    if (browserFacing(ctx.path)) {
      ctx.set('Content-Security-Policy', OIDC_PAGE_CSP);
      ctx.set('X-Frame-Options', 'DENY');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Referrer-Policy', 'no-referrer');
    }
    await next();
  });
}

/**
 * Every error body gets our common shape beside RFC 6749's. What escapes oidc-provider's own error handling is
 * answered here as a page or an error object (`renderError`), never Koa's plain-text 500.
 */
export function useErrorShape(
  provider: Provider,
  renderError: NonNullable<Configuration['renderError']>,
  log: ProviderLog,
): void {
  provider.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      // oidc-provider 9: a device form posted without the session its GET started (stale, forged, or a cookie-less
      // client) fails its xsrf check, and rendering that error touches a new session that its save step then refuses
      // to "persist" (a TypeError). That is the caller's 400 (found by tools/reliability/fuzz.mjs).
      const staleForm = err instanceof TypeError && /previously persisted Sessions/.test(err.message);
      if (!staleForm) log.error({ err }, 'token server: unhandled error');
      ctx.status = staleForm ? 400 : 500;
      const out = staleForm
        ? {
            error: 'invalid_request',
            error_description: 'the form has expired or did not come from this server; open it again',
          }
        : { error: 'server_error', error_description: 'internal error' };
      await renderError(ctx as unknown as KoaContextWithOIDC, out, err as Error);
    }
    if (ctx.status >= 400) {
      // Koa turns an empty body into 204 and a body set without a status into 200: keep the status.
      const status = ctx.status;
      ctx.body = withCommonShape(
        ctx.body ?? {
          error: status === 404 ? 'not_found' : 'invalid_request',
          error_description: ctx.message,
        },
      );
      ctx.status = status;
    }
  });
}

/** A data store that is down is the caller's 503 (retry later), logged as a warning; anything else is logged. */
export function onServerError(provider: Provider, log: ProviderLog): void {
  provider.on('server_error', (ctx, err) => {
    if (isStoreUnavailable(err)) {
      log.warn({ err: (err as Error).message }, 'token server: data store unavailable');
      const message = 'a data store of the token server is unavailable, try again later';
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = {
        error: 'temporarily_unavailable',
        error_description: message,
        code: 'service_unavailable',
        message,
      };
      return;
    }
    log.error({ err }, 'token server error');
  });
}
