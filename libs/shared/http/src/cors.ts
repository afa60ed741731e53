import type { IncomingMessage, ServerResponse } from 'node:http';

/** Request headers a browser may send cross-origin to the APIs (what the console and the SDK send). */
const ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'accept-language',
  'tenant_id',
  'x-request-id',
];
/** Response headers a cross-origin caller may read besides the CORS-safelisted ones. */
const EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'WWW-Authenticate',
  'Allow',
  'Location',
  'X-Request-Id',
];
const METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
/** How long a browser may keep a preflight's answer, seconds. */
const PREFLIGHT_MAX_AGE = 600;

/**
 * CORS for the JSON APIs: a request whose `Origin` is one of `origins` (exact, scheme host and port) gets
 * `Access-Control-Allow-Origin` naming it, and its preflight (`OPTIONS` with `Access-Control-Request-Method`) is
 * answered 204 here, before rate limits and routing. Any other origin gets no CORS header at all: its browser
 * keeps the answer from it, and its preflight goes on to the ordinary routing (no route answers OPTIONS). No
 * credentials mode: the APIs take bearer tokens, never cookies. Runs before everything that can answer, so a 401,
 * 429 or 503 is readable by an allowed caller too.
 */
export function corsMiddleware(
  origins: readonly string[],
): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  const allowed = new Set(origins);
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (!origin) return next();
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    res.appendHeader(
      'Vary',
      preflight ? 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers' : 'Origin',
    );
    if (!allowed.has(origin)) return next();
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (!preflight) {
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS.join(', '));
      return next();
    }
    const asked = String(req.headers['access-control-request-headers'] ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean);
    res.setHeader('Access-Control-Allow-Methods', METHODS);
    res.setHeader(
      'Access-Control-Allow-Headers',
      asked.filter((h) => ALLOWED_HEADERS.includes(h)).join(', ') || ALLOWED_HEADERS.join(', '),
    );
    res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE));
    res.statusCode = 204;
    res.setHeader('Content-Length', '0');
    res.end();
  };
}
