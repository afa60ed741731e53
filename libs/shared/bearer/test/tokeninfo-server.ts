import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  token: string | null;
  authorization: string | undefined;
  contentType: string | undefined;
}

/**
 * A real local HTTP server speaking the /tokeninfo contract of docs/contract.md, answering from a table the test fills.
 * Lets the lib's specs produce what the real token server rarely does on demand: slow answers, 5xx, garbage.
 */
export class TokenInfoServer {
  readonly tokens = new Map<string, Record<string, unknown>>();
  readonly seen: Seen[] = [];
  delayMs = 0;
  status = 200;
  rawBody: string | undefined;
  private server?: Server;

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += chunk;
    const token = new URLSearchParams(body).get('token');
    this.seen.push({
      token,
      authorization: req.headers.authorization,
      contentType: req.headers['content-type'],
    });
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    if (req.method !== 'POST' || req.url !== '/tokeninfo') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(this.status, { 'content-type': 'application/json' });
    res.end(this.rawBody ?? JSON.stringify((token && this.tokens.get(token)) || { active: false }));
  }
}

export const isoIn = (sec: number) => new Date(Date.now() + sec * 1000).toISOString();
