import type { Request } from 'express';

/** `POST .../versions/:tree_version/import`: a CSV upload, streamed to the handler unparsed. */
const IMPORT_PATH = /^\/api\/v1\/trees\/[^/]+\/versions\/[^/]+\/import\/?$/;
const CSV_TYPE = /^(text\/csv|application\/csv)\s*(;|$)/i;

/**
 * A CSV upload to the import route: the shared body parser leaves it unread (the service definition's
 * `streamedBodies`), and the handler parses it as it arrives.
 */
export function isCsvUpload(req: Request): boolean {
  return (
    req.method === 'POST' &&
    IMPORT_PATH.test(req.originalUrl.split('?')[0]) &&
    CSV_TYPE.test(String(req.headers['content-type'] ?? ''))
  );
}
