import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Catch, NotFoundException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { ErrorCode } from '@gatehouse/errors';
import { INTERNAL_MESSAGE, mapError, type ErrorBody } from './error-mapping.js';
import { isUnderPrefix } from './body-parser.js';
import { requestLog } from './logging.js';
import { classifyRouteMiss } from './method-not-allowed.js';
import type { RouteTable } from './route-table.js';

/** A NotFoundException thrown by Nest's catch-all "no route" handler (not by a controller). */
function isRoutingMiss(exception: unknown, req: Request): boolean {
  return (
    exception instanceof NotFoundException &&
    !req.route &&
    typeof exception.message === 'string' &&
    exception.message.startsWith(`Cannot ${req.method} `)
  );
}

/**
 * The error answers of the foundation on plain node objects, shared by the Nest exception filter and the fast
 * lane (which serves requests without Express): the same status, headers, body and log lines on both.
 */
export class ErrorResponder {
  constructor(
    private readonly routes: RouteTable,
    private readonly logger: Logger,
    /** Path prefixes of OAuth endpoints: their errors also carry RFC 6749's `error` and `error_description`. */
    private readonly oauthErrorPaths: readonly string[] = [],
  ) {}

  /**
   * Answers anything thrown as `{code, message, details?}`; unknown errors get an error id, logged with the
   * stack. `path`: the request's path (no query). After the headers went out it can only log and end.
   */
  respond(req: IncomingMessage, res: ServerResponse, exception: unknown, path: string): void {
    if (res.headersSent) {
      requestLog(req, this.logger).error({ err: exception }, 'Error after the response was sent');
      if (!res.writableEnded) res.end();
      return;
    }
    const mapped = mapError(exception);
    if (mapped.severity === 'internal') {
      const errorId = randomUUID();
      requestLog(req, this.logger).error({ err: exception, errorId }, `Internal error ${errorId}`);
      const message = mapped.body.message === INTERNAL_MESSAGE ? INTERNAL_MESSAGE : mapped.body.message;
      mapped.body = { code: mapped.body.code, message: `${message} (error id: ${errorId})` };
    } else if (mapped.severity === 'unavailable') {
      requestLog(req, this.logger).warn({ err: exception }, 'Service unavailable');
    }
    if (mapped.status === 401 && !res.getHeader('WWW-Authenticate'))
      res.setHeader('WWW-Authenticate', 'Bearer');
    this.send(req, res, path, mapped.status, mapped.body);
  }

  /** No handler took the request: 404, or 405 with `Allow`, or 204 with `Allow` for OPTIONS on a known path. */
  routeMiss(req: IncomingMessage, res: ServerResponse, path: string): void {
    const method = req.method ?? 'GET';
    const miss = classifyRouteMiss(this.routes, method, path);
    switch (miss.kind) {
      case 'options':
        res.setHeader('Allow', miss.allow.join(', '));
        res.statusCode = 204;
        res.end();
        return;
      case 'method_not_allowed':
        res.setHeader('Allow', miss.allow.join(', '));
        this.send(req, res, path, 405, {
          code: ErrorCode.MethodNotAllowed,
          message: `Method ${method} is not allowed on ${path}; allowed: ${miss.allow.join(', ')}`,
        });
        return;
      case 'not_found':
        this.send(req, res, path, 404, {
          code: ErrorCode.NotFound,
          message: `No route for ${method} ${path}`,
        });
        return;
    }
  }

  /** Writes an error body as JSON (in the OAuth shape too under an OAuth path); HEAD gets the headers only. */
  send(req: IncomingMessage, res: ServerResponse, path: string, status: number, body: ErrorBody): void {
    const out = this.oauthErrorPaths.some((p) => isUnderPrefix(path, p))
      ? { error: body.code, error_description: body.message, ...body }
      : body;
    const json = JSON.stringify(out);
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', String(Buffer.byteLength(json)));
    if (req.method === 'HEAD') res.end();
    else res.end(json);
  }
}

/**
 * The one global exception filter: every error leaves as `{code, message, details?}` (docs/contract.md).
 * Routing misses become 404 or 405 (+ `Allow`); OPTIONS on a known path is answered 204 with `Allow`.
 * Unknown errors get an error id, logged with the stack; the body never carries SQL or stack.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(private readonly responder: ErrorResponder) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const path = req.originalUrl.split('?')[0];
    if (!res.headersSent && isRoutingMiss(exception, req)) this.responder.routeMiss(req, res, path);
    else this.responder.respond(req, res, exception, path);
  }
}
