import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { parse as legacyParse } from 'node:url';
import { DomainError, ErrorCode } from '@gatehouse/errors';
import type { Logger } from 'pino';
import type { ErrorResponder } from './error.filter.js';
import { identify, logCompletion, type IdentifiedRequest } from './logging.js';
import type { HttpMetrics } from './metrics.js';
import {
  TOO_MANY_REQUESTS_MESSAGE,
  applyRateLimitHeaders,
  presentedCredential,
  isRateLimitExempt,
  type HttpRateLimiter,
  type RateLimitDecision,
} from './rate-limit.js';
import type { RouteTable } from './route-table.js';

type TrustFn = (addr: string, i: number) => boolean;
interface ProxyAddr {
  (req: IncomingMessage, trust: TrustFn): string | undefined;
  compile(val: string[]): TrustFn;
}
// proxy-addr (Express's own dependency for `req.ip`) ships no types; loaded as CommonJS.
const load = createRequire(import.meta.url);
const proxyaddr = load('proxy-addr') as ProxyAddr;
/** What Express compiles `trust proxy` off (false, [], unset) to: the socket's address is the client's. */
const TRUST_NONE = proxyaddr.compile([]);

/** Where the lane leaves the client address it computed on a request (for the handler's own use). */
const CLIENT_ADDRESS = Symbol('gatehouse.clientAddress');

/**
 * The client's address as the rate limits saw it: on the fast lane, the one it computed with the trusted proxies
 * (TRUST_PROXY); on Express, `req.ip`; else the socket's peer.
 */
export function clientAddress(req: IncomingMessage): string | undefined {
  const r = req as IncomingMessage & { [CLIENT_ADDRESS]?: string; ip?: string };
  return r[CLIENT_ADDRESS] ?? r.ip ?? req.socket?.remoteAddress;
}

/** A request built from another (a body replayed in another form) keeps the client address the lane computed. */
export function inheritClientAddress(copy: IncomingMessage, from: IncomingMessage): void {
  const address = (from as IncomingMessage & { [CLIENT_ADDRESS]?: string })[CLIENT_ADDRESS];
  if (address !== undefined)
    (copy as IncomingMessage & { [CLIENT_ADDRESS]?: string })[CLIENT_ADDRESS] = address;
}

/**
 * Requests served beside Express: the lane's handler runs straight on node's `request` event, behind the
 * foundation's request id and completion log, metrics and rate limits (the same semantics as the Express
 * middlewares), without Express's request/response decoration, router or Nest's pipeline.
 */
export interface FastLane {
  /**
   * Whether the lane serves this request: `method` as sent, `path` the request target up to `?`. Claim only
   * what the handler answers itself; everything else goes through Express and Nest as before.
   */
  matches(method: string, path: string): boolean;
  /**
   * Serves a claimed request on plain node objects. `next()` (the handler did not serve it after all) answers
   * 404/405 as the foundation does for a route miss; `next(err)` and a thrown error answer as the exception
   * filter does (JSON error, an error id for unknown errors).
   */
  handle(req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void;
}

export interface FastLaneDeps {
  lane: FastLane;
  logger: Logger;
  routes: RouteTable;
  metrics: HttpMetrics;
  limiter: HttpRateLimiter;
  errors: ErrorResponder;
  /** Express's compiled `trust proxy` function (`app.get('trust proxy fn')`). */
  trust: TrustFn;
}

/**
 * The pathname of a request target exactly as Express's `req.path` gives it (parseurl: a fast split at `?` for
 * the usual origin-form target, node's legacy URL parser for anything with spaces, `#` or an absolute form).
 */
export function requestPath(url: string): string {
  if (url.charCodeAt(0) === 0x2f /* / */) {
    let end = url.length;
    for (let i = 1; i < url.length; i++) {
      const c = url.charCodeAt(i);
      if (c === 0x3f /* ? */) {
        if (end === url.length) end = i;
      } else if (
        c === 0x09 ||
        c === 0x0a ||
        c === 0x0c ||
        c === 0x0d ||
        c === 0x20 ||
        c === 0x23 ||
        c === 0xa0 ||
        c === 0xfeff
      ) {
        return legacyParse(url).pathname ?? '';
      }
    }
    return end === url.length ? url : url.slice(0, end);
  }
  return legacyParse(url).pathname ?? '';
}

/**
 * The per-request pipeline of the lane, in the order of the Express middlewares it stands for: request id and
 * completion line, metrics (route label from the RouteTable), rate limit (same keys, headers, auth-failure
 * counting, 429 in the error shape of the path), then the handler; errors answered as the exception filter does.
 * One `finish` listener serves the log line and the metrics.
 */
export class FastLanePipeline {
  constructor(private readonly deps: FastLaneDeps) {}

  /** The client address as Express's `req.ip` with the app's `trust proxy` setting. */
  clientIp(req: IncomingMessage): string | undefined {
    if (this.deps.trust === TRUST_NONE) return req.socket?.remoteAddress;
    return proxyaddr(req, this.deps.trust);
  }

  serve(req: IdentifiedRequest, res: ServerResponse): void {
    const { logger, metrics, routes, limiter } = this.deps;
    const start = performance.now();
    const id = identify(req, res);
    const method = req.method ?? 'GET';
    const path = requestPath(req.url ?? '/');
    const match = routes.match(method, path);
    res.once('finish', () => {
      const status = res.statusCode;
      logCompletion(logger, req, status, id, start);
      metrics.record(method, match.label, status, (performance.now() - start) / 1000);
    });
    if (isRateLimitExempt(path)) return this.run(req, res, path);
    const ip = this.clientIp(req);
    (req as IncomingMessage & { [CLIENT_ADDRESS]?: string })[CLIENT_ADDRESS] = ip;
    limiter.admit(
      match.endpoint,
      presentedCredential(req),
      `ip:${ip ?? 'unknown'}`,
      res,
      (d: RateLimitDecision) => {
        if (applyRateLimitHeaders(res, d)) return this.run(req, res, path);
        this.deps.errors.respond(
          req,
          res,
          new DomainError(ErrorCode.TooManyRequests, TOO_MANY_REQUESTS_MESSAGE),
          path,
        );
      },
      (err: unknown) => this.deps.errors.respond(req, res, err, path),
    );
  }

  private run(req: IncomingMessage, res: ServerResponse, path: string): void {
    let called = false;
    const next = (err?: unknown) => {
      if (called) return;
      called = true;
      if (err === undefined) this.deps.errors.routeMiss(req, res, path);
      else this.deps.errors.respond(req, res, err, path);
    };
    try {
      this.deps.lane.handle(req, res, next);
    } catch (err) {
      next(err);
    }
  }
}

/**
 * Puts the lane in front of Express on the app's node server: its `request` listener (the Express app) is
 * replaced by a dispatcher sending claimed requests down the lane and the rest to Express as before. The server
 * object itself (listen, close, keep-alive settings, connection tracking) is untouched.
 */
export function installFastLane(server: Server, deps: FastLaneDeps): void {
  const listeners = server.listeners('request');
  if (listeners.length !== 1)
    throw new Error(`fast lane: expected one 'request' listener (Express), found ${listeners.length}`);
  const express = listeners[0] as (req: IncomingMessage, res: ServerResponse) => void;
  const pipeline = new FastLanePipeline(deps);
  const { lane } = deps;
  server.removeListener('request', express);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    if (lane.matches(req.method ?? 'GET', q === -1 ? url : url.slice(0, q))) pipeline.serve(req, res);
    else express(req, res);
  });
}
