#!/usr/bin/env node
// The console's static server: the built single-page application (dist/apps/console/public), its runtime
// /config.json, and nothing else. Plain Node (no framework, no dependency): the image runs it as a fourth service.
//
//   CONSOLE_PORT          port (default 3003)
//   CONSOLE_HOST          interface to listen on (default all)
//   CONSOLE_STATIC_DIR    the built app (default ../../../public next to this file once built, or dist/apps/console/public)
//   CONSOLE_AUTH_URL      the token server as the browser reaches it (default ISSUER, else http://localhost:<AUTH_PORT>)
//   CONSOLE_IDENTITY_URL  the management API as the browser reaches it (default http://localhost:<IDENTITY_PORT>)
//   CONSOLE_TREE_URL      the tree API as the browser reaches it (default http://localhost:<TREE_PORT>)
//   CONSOLE_CLIENT_ID     the console's OAuth client (default: the client the token server seeds, CONSOLE_CLIENT_ID
//                         of @gatehouse/identity-data)
//
// Caching: files under /assets/ carry a content hash in their name (Vite), so they are `immutable` for a year;
// index.html and /config.json are `no-cache` (always revalidated), so a new release or a changed URL is seen at once.
// Every HTML answer carries a strict Content-Security-Policy: scripts and styles from this origin only, no inline
// script, connections only to the three services.
import { createReadStream, existsSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The seeded console client's id (libs/identity/data/src/console-client.ts; a test keeps the two equal). */
export const DEFAULT_CONSOLE_CLIENT_ID = 'a3f7c2d0-5e1b-5c8a-9d4f-0c6b1e2a7f93';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';
const NO_CACHE = 'no-cache';

/** The origin of a URL (for the CSP); throws on something that is not an http(s) URL. */
function originOf(name, value) {
  let url;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} must be an http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`${name} must be an http(s) URL, got "${value}"`);
  return url.origin;
}

const trimSlash = (s) => s.replace(/\/+$/, '');

/**
 * The server's settings from the environment.
 * @param {NodeJS.ProcessEnv} env
 */
export function consoleSettings(env = process.env) {
  const port = (name, fallback) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > 65535)
      throw new Error(`${name} must be a port number, got "${raw}"`);
    return n;
  };
  const here = path.dirname(fileURLToPath(import.meta.url));
  const built = path.resolve(here, '../../../public');
  const staticDir = path.resolve(
    env.CONSOLE_STATIC_DIR ||
      (existsSync(built) ? built : path.resolve(here, '../../../dist/apps/console/public')),
  );
  const config = {
    authUrl: trimSlash(env.CONSOLE_AUTH_URL || env.ISSUER || `http://localhost:${port('AUTH_PORT', 3000)}`),
    identityUrl: trimSlash(env.CONSOLE_IDENTITY_URL || `http://localhost:${port('IDENTITY_PORT', 3001)}`),
    treeUrl: trimSlash(env.CONSOLE_TREE_URL || `http://localhost:${port('TREE_PORT', 3002)}`),
    clientId: env.CONSOLE_CLIENT_ID || DEFAULT_CONSOLE_CLIENT_ID,
  };
  const origins = [
    originOf('CONSOLE_AUTH_URL', config.authUrl),
    originOf('CONSOLE_IDENTITY_URL', config.identityUrl),
    originOf('CONSOLE_TREE_URL', config.treeUrl),
  ];
  return {
    port: port('CONSOLE_PORT', 3003),
    host: env.CONSOLE_HOST || undefined,
    staticDir,
    config,
    origins,
  };
}

/** The Content-Security-Policy of the console's pages: nothing inline, nothing from elsewhere but the three APIs. */
export function contentSecurityPolicy(origins) {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self' ${[...new Set(origins)].join(' ')}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

/**
 * The request handler: /config.json, /livez, /readyz, files of the build, and index.html for every other GET of
 * a page (client-side routes such as /users/<id>).
 */
export function createHandler(settings) {
  const { staticDir, config, origins } = settings;
  const csp = contentSecurityPolicy(origins);
  const configBody = JSON.stringify(config);
  const indexFile = path.join(staticDir, 'index.html');
  const common = {
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'X-Frame-Options': 'DENY',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  };
  const send = (res, status, headers, body) => {
    res.writeHead(status, { ...common, ...headers });
    res.end(body);
  };
  const sendFile = (req, res, file, st, cache) => {
    const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    const etag = `W/"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
    const headers = { 'Content-Type': type, 'Cache-Control': cache, ETag: etag, 'Content-Length': st.size };
    if (type.startsWith('text/html')) headers['Content-Security-Policy'] = csp;
    if (req.headers['if-none-match'] === etag) return send(res, 304, { 'Cache-Control': cache, ETag: etag });
    res.writeHead(200, { ...common, ...headers });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  };
  return (req, res) => {
    const method = req.method ?? 'GET';
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      return send(res, 400, { 'Content-Type': 'text/plain' }, 'bad request\n');
    }
    if (method !== 'GET' && method !== 'HEAD') {
      return send(res, 405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }, 'method not allowed\n');
    }
    if (pathname === '/livez' || pathname === '/readyz') {
      const ok = pathname === '/livez' || existsSync(indexFile);
      return send(
        res,
        ok ? 200 : 503,
        { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
        JSON.stringify({ status: ok ? 'ok' : 'unavailable' }),
      );
    }
    if (pathname === '/config.json') {
      return send(
        res,
        200,
        { 'Content-Type': TYPES['.json'], 'Cache-Control': NO_CACHE },
        method === 'HEAD' ? undefined : configBody,
      );
    }
    const file = path.join(staticDir, path.normalize(pathname));
    if (!file.startsWith(staticDir + path.sep) && file !== staticDir) {
      return send(res, 404, { 'Content-Type': 'text/plain' }, 'not found\n');
    }
    const st = pathname !== '/' ? statSync(file, { throwIfNoEntry: false }) : undefined;
    if (st?.isFile() && path.basename(file) !== 'index.html') {
      return sendFile(req, res, file, st, pathname.startsWith('/assets/') ? IMMUTABLE : NO_CACHE);
    }
    // A missing asset is a 404 (a stale page asking for an old hash must not get HTML as JavaScript).
    if (pathname.startsWith('/assets/') || path.extname(pathname) !== '') {
      return send(res, 404, { 'Content-Type': 'text/plain', 'Cache-Control': NO_CACHE }, 'not found\n');
    }
    const index = statSync(indexFile, { throwIfNoEntry: false });
    if (!index) return send(res, 503, { 'Content-Type': 'text/plain' }, 'the console is not built\n');
    return sendFile(req, res, indexFile, index, NO_CACHE);
  };
}

/** Starts the server; resolves with it once it listens. */
export async function startConsoleServer(settings = consoleSettings()) {
  const server = http.createServer(createHandler(settings));
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve(undefined));
  });
  return server;
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  let settings;
  try {
    settings = consoleSettings();
  } catch (err) {
    process.stderr.write(`console: ${err instanceof Error ? err.message : err}\n`);
    process.exit(1);
  }
  if (!existsSync(path.join(settings.staticDir, 'index.html'))) {
    process.stderr.write(
      `console: ${settings.staticDir}/index.html is missing: build it (npx nx build console)\n`,
    );
    process.exit(1);
  }
  const server = await startConsoleServer(settings);
  const address = server.address();
  const log = (msg, extra = {}) =>
    process.stdout.write(`${JSON.stringify({ level: 30, service: 'console', msg, ...extra })}\n`);
  log(`Listening on ${typeof address === 'string' ? address : `${address?.address}:${address?.port}`}`, {
    config: settings.config,
  });
  const stop = (signal) => {
    log(`received ${signal}, shutting down`);
    server.close(() => process.exit(0));
    server.closeAllConnections?.();
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
