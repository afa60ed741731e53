import { createServer, request as httpRequest, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';

/** A plain HTTP proxy, e.g. in front of the token server; `onRequest` sees each request's path first. */
class HttpProxy {
  private server?: Server;

  constructor(private readonly target: string) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  /** False: the request's connection is dropped unanswered, as an unreachable server would look. */
  protected onRequest(_path: string | undefined): boolean {
    return true;
  }

  async start(): Promise<this> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      if (!this.onRequest(req.url)) {
        res.destroy();
        return;
      }
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      // Upstream down: drop the client connection, as an unreachable server would look.
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

/** A proxy to the token server that can be switched off (the token server then looks unreachable). */
export class SwitchableProxy extends HttpProxy {
  up = true;

  protected override onRequest(): boolean {
    return this.up;
  }
}

/** A proxy in front of the token server that counts the /tokeninfo calls passing through it. */
export class CountingProxy extends HttpProxy {
  tokeninfoCalls = 0;

  protected override onRequest(path: string | undefined): boolean {
    if (path?.startsWith('/tokeninfo')) this.tokeninfoCalls++;
    return true;
  }
}

/** A TCP proxy (e.g. in front of PostgreSQL) that can be cut: open connections dropped, new ones refused. */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  get listenPort(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  async start(): Promise<this> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.port, this.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** Drop every connection and stop listening: the server now looks unreachable. */
  async cut(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
