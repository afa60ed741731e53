import { randomUUID } from 'node:crypto';
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
 * The one global exception filter: every error leaves as `{code, message, details?}` (docs/contract.md).
 * Routing misses become 404 or 405 (+ `Allow`); OPTIONS on a known path is answered 204 with `Allow`.
 * Unknown errors get an error id, logged with the stack; the body never carries SQL or stack.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  constructor(
    private readonly routes: RouteTable,
    private readonly logger: Logger,
    /** Path prefixes of OAuth endpoints: their errors also carry RFC 6749's `error` and `error_description`. */
    private readonly oauthErrorPaths: readonly string[] = [],
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();

    if (res.headersSent) {
      requestLog(req, this.logger).error({ err: exception }, 'Error after the response was sent');
      if (!res.writableEnded) res.end();
      return;
    }

    if (isRoutingMiss(exception, req)) {
      const path = req.originalUrl.split('?')[0];
      const miss = classifyRouteMiss(this.routes, req.method, path);
      switch (miss.kind) {
        case 'options':
          res.setHeader('Allow', miss.allow.join(', '));
          res.status(204).end();
          return;
        case 'method_not_allowed':
          res.setHeader('Allow', miss.allow.join(', '));
          this.send(req, res, 405, {
            code: ErrorCode.MethodNotAllowed,
            message: `Method ${req.method} is not allowed on ${path}; allowed: ${miss.allow.join(', ')}`,
          });
          return;
        case 'not_found':
          this.send(req, res, 404, {
            code: ErrorCode.NotFound,
            message: `No route for ${req.method} ${path}`,
          });
          return;
      }
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
    this.send(req, res, mapped.status, mapped.body);
  }

  private send(req: Request, res: Response, status: number, body: ErrorBody) {
    const path = req.originalUrl.split('?')[0];
    const out = this.oauthErrorPaths.some((p) => isUnderPrefix(path, p))
      ? { error: body.code, error_description: body.message, ...body }
      : body;
    res.status(status).type('application/json').send(JSON.stringify(out));
  }
}
