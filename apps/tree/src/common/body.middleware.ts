import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { bodyParsers } from '@gatehouse/http';
import { SERVICE_ENV } from '@gatehouse/service';

/** Prefix whose bodies the app parses itself (the service definition excludes it from the global parser). */
export const TREE_ROUTES_PREFIX = '/api/v1/trees';

/** `POST .../versions/:tree_version/import`: a CSV upload, streamed to the handler unparsed. */
const IMPORT_PATH = /^\/api\/v1\/trees\/[^/]+\/versions\/[^/]+\/import\/?$/;
const CSV_TYPE = /^(text\/csv|application\/csv)\s*(;|$)/i;

export function isCsvUpload(req: Request): boolean {
  return (
    req.method === 'POST' &&
    IMPORT_PATH.test(req.originalUrl.split('?')[0]) &&
    CSV_TYPE.test(String(req.headers['content-type'] ?? ''))
  );
}

/**
 * The global JSON body parser (the same `bodyParsers` of @gatehouse/http, same limit and errors) for the tree
 * routes, except CSV uploads to the import route, which must stay a stream. The global parser cannot tell them
 * apart (it excludes by path prefix only), so the tree prefix is excluded there and parsed here.
 */
@Injectable()
export class TreeBodyMiddleware implements NestMiddleware {
  private readonly parse: ReturnType<typeof bodyParsers>;

  constructor(@Inject(SERVICE_ENV) env: { BODY_LIMIT?: string }) {
    this.parse = bodyParsers({ limit: env.BODY_LIMIT ?? '1mb', excludePaths: [], urlencoded: false });
  }

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    if (isCsvUpload(req)) return next();
    // Rejections reach Nest's exception filter (an error passed to next() would bypass it).
    await new Promise<void>((resolve, reject) =>
      this.parse(req, res, (err?: unknown) => (err ? reject(err) : resolve())),
    );
    next();
  }
}
