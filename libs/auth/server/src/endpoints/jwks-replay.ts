import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeySet } from '../keys/signing-keys.js';
import type { Handler } from './context.js';

/**
 * GET /jwks: oidc-provider's own answer, kept from the first time it gave it (its headers and bytes) until the key
 * set changes, and replayed for a plain request (no query, no CORS, no conditional GET: those go to oidc-provider,
 * as the first request after a key change does).
 */
export class JwksReplay {
  /** oidc-provider's answer to GET /jwks for the key set `keys`. */
  private answer?: {
    keys: KeySet;
    body: Buffer;
    headers: (readonly [string, number | string | string[]])[];
  };

  /**
   * Answers a plain GET with the kept answer, or with oidc-provider's (`callback`), kept for the next time; false
   * (nothing answered) for any other request.
   */
  serve(req: IncomingMessage, res: ServerResponse, keys: KeySet, callback: Handler): boolean {
    const h = req.headers;
    const plain =
      !(req.url ?? '').includes('?') &&
      h.origin === undefined &&
      h['if-none-match'] === undefined &&
      h['if-modified-since'] === undefined;
    const known = this.answer;
    if (plain && known && known.keys === keys) {
      res.statusCode = 200;
      for (const [name, value] of known.headers) res.setHeader(name, value);
      res.end(known.body);
      return true;
    }
    if (!plain) return false;
    this.keepAnswer(res, keys);
    callback(req, res);
    return true;
  }

  /** Keeps what oidc-provider answers on `res` (a 200 with a body in one piece) as the answer for `keys`. */
  private keepAnswer(res: ServerResponse, keys: KeySet): void {
    const before = new Set(res.getHeaderNames());
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    (res as { end: unknown }).end = (...args: unknown[]) => {
      const chunk = args[0];
      if (res.statusCode === 200 && (typeof chunk === 'string' || Buffer.isBuffer(chunk))) {
        this.answer = {
          keys,
          body: Buffer.from(chunk),
          headers: res
            .getHeaderNames()
            .filter((n) => !before.has(n))
            .map((n) => [n, res.getHeader(n)!] as const),
        };
      }
      return end(...args);
    };
  }
}
