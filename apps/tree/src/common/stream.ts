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

/**
 * Encodes text into UTF-8 buffers of about `size` bytes for a streamed response. A large response made of many
 * small strings is cheapest this way: joining them into one string first makes V8 flatten and then encode a
 * rope of megabytes, and collect it (twice the raw SQL's time for a 111,111-node subtree, see docs/benchmarks.md).
 */
export class ChunkWriter {
  private buf: Buffer;
  private at = 0;

  constructor(private readonly size = 256 * 1024) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** Appends `text`; returns the buffer to send when it was full, else undefined. */
  write(text: string): Buffer | undefined {
    const most = text.length * 3; // UTF-8 bytes of a UTF-16 string, at most
    let full: Buffer | undefined;
    if (this.at + most > this.buf.length) {
      full = this.take();
      if (most > this.buf.length) this.buf = Buffer.allocUnsafe(Math.max(this.size, most));
    }
    this.at += this.buf.write(text, this.at);
    return full;
  }

  /** What was written since the last full buffer (undefined when nothing was); the writer starts over. */
  take(): Buffer | undefined {
    if (this.at === 0) return undefined;
    const out = this.buf.subarray(0, this.at);
    this.buf = Buffer.allocUnsafe(this.size);
    this.at = 0;
    return out;
  }
}
