// A browser's part of the authorization code flow over plain HTTP (the code-flow benchmark, the replica test): a
// cookie jar, redirects followed while they stay on the token server, forms read from the HTML.
import { createHash, randomBytes } from 'node:crypto';

/** A browser's cookies: kept by name and path, sent where the path matches, dropped when expired. */
export class Jar {
  constructor() {
    /** @type {Map<string, { name: string; value: string; path: string }>} */
    this.cookies = new Map();
  }
  /** @param {Response} res */
  store(res) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      let cookiePath = '/';
      let expired = value === '';
      for (const attr of attrs) {
        const [k, v = ''] = attr.trim().split('=');
        const key = k.toLowerCase();
        if (key === 'path') cookiePath = v || '/';
        else if (key === 'max-age' && Number(v) <= 0) expired = true;
        else if (key === 'expires' && Date.parse(v) <= Date.now()) expired = true;
      }
      const id = `${name}\t${cookiePath}`;
      if (expired) this.cookies.delete(id);
      else this.cookies.set(id, { name, value, path: cookiePath });
    }
  }
  /** @param {string} pathname */
  header(pathname) {
    const sent = [];
    for (const c of this.cookies.values()) {
      const prefix = c.path.endsWith('/') ? c.path : `${c.path}/`;
      if (pathname === c.path || pathname.startsWith(prefix)) sent.push(`${c.name}=${c.value}`);
    }
    return sent.join('; ');
  }
}

/**
 * GET `url` (or POST `form` to it) and follow redirects while they stay on `origin`; a redirect elsewhere (the
 * client's callback) ends it. `headers` go with every hop; `onHop` sees each answer. Returns the last answer, where
 * the walk ended, and the page's HTML.
 * @param {{ jar: Jar; origin: string; url: string; form?: Record<string, string>; headers?: Record<string, string>;
 *   onHop?: (res: Response, method: string, at: string) => void }} o
 */
export async function walk({ jar, origin, url, form, headers = {}, onHop }) {
  let at = url;
  let body = form ? new URLSearchParams(form).toString() : undefined;
  for (let hop = 0; hop < 12; hop++) {
    const cookie = jar.header(new URL(at).pathname);
    const method = body ? 'POST' : 'GET';
    const res = await fetch(at, {
      method,
      redirect: 'manual',
      headers: {
        accept: 'text/html',
        ...headers,
        ...(cookie ? { cookie } : {}),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body,
    });
    jar.store(res);
    onHop?.(res, method, at);
    const html = await res.text();
    if (res.status < 300 || res.status >= 400) return { status: res.status, url: at, html };
    const next = new URL(res.headers.get('location') ?? '', at).toString();
    if (!next.startsWith(`${origin}/`)) return { status: res.status, url: next, html: '' };
    at = next;
    body = undefined;
  }
  throw new Error(`more than 12 redirects from ${url}`);
}

const unescapeHtml = (s) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&#x2F;/gi, '/')
    .replace(/&#47;/g, '/');

/** The action of the page's form whose path matches `pattern`, as an absolute URL. */
export function actionOf(html, base, pattern) {
  for (const m of html.matchAll(/<form\b[^>]*\baction="([^"]+)"/g)) {
    const action = new URL(unescapeHtml(m[1]), base);
    if (pattern.test(action.pathname)) return action.toString();
  }
  throw new Error(`no form matching ${pattern} on the page: ${html.slice(0, 300)}`);
}

/** The value of the page's field `name`. */
export const fieldOf = (html, name) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];

/** A fresh authorization request: PKCE S256, state and nonce. */
export function authorizationRequest(origin, clientId, callback) {
  const b64url = (buf) => Buffer.from(buf).toString('base64url');
  const verifier = b64url(randomBytes(32));
  const state = b64url(randomBytes(12));
  const nonce = b64url(randomBytes(12));
  const url = new URL(`${origin}/authorize`);
  url.search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: callback,
    scope: 'openid profile',
    state,
    nonce,
    code_challenge: b64url(createHash('sha256').update(verifier).digest()),
    code_challenge_method: 'S256',
  }).toString();
  return { url: url.toString(), verifier, state, nonce };
}
