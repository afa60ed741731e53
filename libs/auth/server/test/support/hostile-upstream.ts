import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** How a huge document is sent. */
export type HugeMode = 'length' | 'chunked' | 'close' | 'lying' | 'slow';

const CHUNK = Buffer.alloc(64 * 1024, '{"kty":"RSA","e":"AQAB","n":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},');
const HEAD = Buffer.from('{"keys":[');

/**
 * A hostile identity provider on raw sockets (full control of the framing): GET `/huge/<mode>[...]` streams a
 * 100 MB JSON-looking document, with an honest `content-length` (`length`), chunked without one (`chunked`),
 * delimited by closing the connection (`close`), with a small `content-length` that the body overruns (`lying`), or
 * one byte every 200 ms (`slow`). GET `<prefix>/.well-known/openid-configuration` answers the discovery document
 * set with `discovery(prefix, doc)`; a path set with `json(path, body)` answers that JSON. It never allocates more
 * than one 64 KiB chunk, whatever the reader does, so the memory the test measures is the reader's.
 */
export class HostileUpstream {
  static readonly HUGE_BYTES = 100 * 1024 * 1024;
  /** Connections per path, and how many are open right now. */
  readonly hits = new Map<string, number>();
  open = 0;
  maxOpen = 0;
  private readonly docs = new Map<string, unknown>();
  private readonly sockets = new Set<Socket>();
  private server?: Server;

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  static async start(): Promise<HostileUpstream> {
    const h = new HostileUpstream();
    h.server = createServer((socket) => h.serve(socket));
    await new Promise<void>((resolve) => h.server!.listen(0, '127.0.0.1', resolve));
    return h;
  }

  /** `<prefix>/.well-known/openid-configuration` answers `doc`. */
  discovery(prefix: string, doc: unknown): void {
    this.docs.set(`${prefix}/.well-known/openid-configuration`, doc);
  }

  json(path: string, body: unknown): void {
    this.docs.set(path, body);
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    this.open++;
    this.maxOpen = Math.max(this.maxOpen, this.open);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.open--;
    });
    let head = '';
    const onData = (data: Buffer) => {
      head += data.toString('latin1');
      if (!head.includes('\r\n\r\n')) {
        if (head.length > 16 * 1024) socket.destroy();
        return;
      }
      socket.off('data', onData);
      const target = /^GET (\S+) HTTP/.exec(head)?.[1] ?? '/';
      const path = target.split('?')[0];
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      void this.answer(socket, path);
    };
    socket.on('data', onData);
  }

  private async answer(socket: Socket, path: string): Promise<void> {
    const doc = this.docs.get(path);
    if (doc !== undefined) {
      const body = Buffer.from(JSON.stringify(doc));
      socket.end(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body.toString()}`,
      );
      return;
    }
    const mode = /^\/huge\/([a-z]+)/.exec(path)?.[1] as HugeMode | undefined;
    const headers: Record<HugeMode, string> = {
      length: `content-length: ${HostileUpstream.HUGE_BYTES}`,
      chunked: 'transfer-encoding: chunked',
      close: 'connection: close',
      lying: 'content-length: 300',
      slow: 'transfer-encoding: chunked',
    };
    if (!mode || !headers[mode]) {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    const write = (buf: Buffer | string) =>
      new Promise<boolean>((resolve) => {
        if (socket.destroyed) return resolve(false);
        if (socket.write(buf)) return resolve(true);
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          resolve(!socket.destroyed);
        };
        socket.on('drain', done);
        socket.on('close', done);
      });
    const chunked = mode === 'chunked' || mode === 'slow';
    const frame = async (buf: Buffer) =>
      chunked
        ? (await write(`${buf.length.toString(16)}\r\n`)) && (await write(buf)) && write('\r\n')
        : write(buf);
    if (!(await write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${headers[mode]}\r\n\r\n`)))
      return;
    if (!(await frame(HEAD))) return;
    if (mode === 'slow') {
      for (let i = 0; i < 600 && !socket.destroyed; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        if (!(await frame(Buffer.from(' ')))) return;
      }
      socket.destroy();
      return;
    }
    for (let sent = HEAD.length; sent < HostileUpstream.HUGE_BYTES; sent += CHUNK.length) {
      if (!(await frame(CHUNK))) return;
    }
    if (chunked) await write('0\r\n\r\n');
    socket.end();
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
