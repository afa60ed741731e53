import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';

/**
 * Sends a stream as the response body. If the client goes away the source is destroyed (an export then releases its
 * database connection); an error after the first byte can only cut the response short.
 */
export async function sendStream(
  res: Response,
  stream: Readable,
  contentType: string,
  filename?: string,
): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', contentType);
  res.setHeader('Cache-Control', 'no-store');
  if (filename)
    res.setHeader('Content-Disposition', `attachment; filename="${filename.replace(/[^\w.-]/g, '_')}"`);
  try {
    await pipeline(stream, res);
  } catch {
    if (!res.writableEnded) res.destroy();
  }
}
