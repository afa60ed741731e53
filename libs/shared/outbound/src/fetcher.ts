import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { bareHost, OutboundPolicy, OutboundRefused, type ResolvedAddress } from './policy.js';

/** A fetch that failed (refused by the policy, unreachable, too slow, too large, not 200, not JSON ...). */
export class OutboundError extends Error {
  constructor(
    /** The detail, for the log only: callers answer their own generic message. */
    message: string,
    readonly url: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

export interface OutboundLimits {
  /** Whole fetch: waiting for a slot, DNS, connect, TLS, headers and body. */
  timeoutMs: number;
  /** From the start until the connection (TLS included) is up. */
  connectTimeoutMs: number;
  /** Largest body read; a larger `content-length` is refused before reading, a longer stream is cut. */
  maxBytes: number;
  /** Fetches running at once in this process; more wait (within their timeout), up to `maxQueued`. */
  maxConcurrent: number;
  /** Fetches running at once to one host (so one slow provider cannot take every slot). */
  maxPerHost: number;
  /** Fetches waiting for a slot; past that a fetch fails at once. */
  maxQueued: number;
}

export const DEFAULT_LIMITS: OutboundLimits = {
  timeoutMs: 5_000,
  connectTimeoutMs: 3_000,
  maxBytes: 512 * 1024,
  maxConcurrent: 16,
  maxPerHost: 4,
  maxQueued: 64,
};

export interface OutboundResponse {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

interface OutboundPost {
  body: Buffer;
  headers: Record<string, string>;
}

interface Waiter {
  host: string;
  grant: () => void;
}

/**
 * Outbound GETs under the OutboundPolicy: the host is resolved once, every address checked, and the connection made
 * to that address (a `lookup` that answers only it; SNI and Host stay the name); redirects are not followed (a 3xx
 * is a failure like any status but 200); the body is read as a stream against a byte counter after the
 * `content-length` check; each fetch has a connect and a total deadline; fetches run a bounded number at once (per
 * process and per host) and concurrent fetches of one URL share one.
 */
export class OutboundFetcher {
  readonly policy: OutboundPolicy;
  readonly limits: OutboundLimits;
  private readonly inflight = new Map<string, Promise<OutboundResponse>>();
  private running = 0;
  private readonly perHost = new Map<string, number>();
  private readonly queue: Waiter[] = [];

  constructor(opts: { policy?: OutboundPolicy; limits?: Partial<OutboundLimits> } = {}) {
    this.policy = opts.policy ?? new OutboundPolicy();
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
  }

  /** GET `url` (200 only): the body, at most `maxBytes` (default the fetcher's limit). */
  get(url: string, opts: { accept?: string; maxBytes?: number } = {}): Promise<OutboundResponse> {
    const accept = opts.accept ?? '*/*';
    const maxBytes = Math.min(opts.maxBytes ?? this.limits.maxBytes, this.limits.maxBytes);
    const key = `${accept} ${maxBytes} ${url}`;
    const running = this.inflight.get(key);
    if (running) return running;
    const p = this.run(url, accept, maxBytes).finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  /**
   * POST `body` to `url` under the same policy and limits (never shared with another call: a POST is not
   * idempotent). Any 2xx is success; a 3xx (not followed), 4xx or 5xx is an OutboundError naming the status.
   */
  post(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<OutboundResponse> {
    const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    return this.run(url, headers.accept ?? '*/*', this.limits.maxBytes, { body: payload, headers });
  }

  /** GET a JSON object. */
  async getJson(url: string, opts: { maxBytes?: number } = {}): Promise<Record<string, unknown>> {
    const res = await this.get(url, { accept: 'application/json', maxBytes: opts.maxBytes });
    let body: unknown;
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {
      throw new OutboundError('the answer is not JSON', url);
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw new OutboundError('the answer is not a JSON object', url);
    }
    return body as Record<string, unknown>;
  }

  private async run(
    raw: string,
    accept: string,
    maxBytes: number,
    post?: OutboundPost,
  ): Promise<OutboundResponse> {
    const deadline = Date.now() + this.limits.timeoutMs;
    let url: URL;
    try {
      url = this.policy.check(raw);
    } catch (err) {
      throw new OutboundError(`refused: ${(err as Error).message}`, raw);
    }
    const host = bareHost(url).toLowerCase();
    await this.acquire(host, deadline, raw);
    try {
      const left = () => deadline - Date.now();
      const resolved = await withDeadline(this.policy.resolve(url), left(), 'DNS').catch((err: unknown) => {
        throw new OutboundError(
          err instanceof OutboundRefused ? `refused: ${err.message}` : (err as Error).message,
          raw,
        );
      });
      return await this.request(resolved.url, resolved.address, accept, maxBytes, deadline, post);
    } finally {
      this.release(host);
    }
  }

  private acquire(host: string, deadline: number, url: string): Promise<void> {
    if (this.mayStart(host)) {
      this.start(host);
      return Promise.resolve();
    }
    if (this.queue.length >= this.limits.maxQueued) {
      return Promise.reject(new OutboundError('too many outbound requests waiting', url));
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        host,
        grant: () => {
          clearTimeout(timer);
          this.start(host);
          resolve();
        },
      };
      const timer = setTimeout(
        () => {
          const i = this.queue.indexOf(waiter);
          if (i >= 0) this.queue.splice(i, 1);
          reject(new OutboundError('timed out waiting for a free outbound slot', url));
        },
        Math.max(0, deadline - Date.now()),
      );
      this.queue.push(waiter);
    });
  }

  private mayStart(host: string): boolean {
    return this.running < this.limits.maxConcurrent && (this.perHost.get(host) ?? 0) < this.limits.maxPerHost;
  }

  private start(host: string): void {
    this.running++;
    this.perHost.set(host, (this.perHost.get(host) ?? 0) + 1);
  }

  private release(host: string): void {
    this.running--;
    const n = (this.perHost.get(host) ?? 1) - 1;
    if (n > 0) this.perHost.set(host, n);
    else this.perHost.delete(host);
    const i = this.queue.findIndex((w) => this.mayStart(w.host));
    if (i >= 0) this.queue.splice(i, 1)[0].grant();
  }

  private request(
    url: URL,
    pinned: ResolvedAddress,
    accept: string,
    maxBytes: number,
    deadline: number,
    post?: OutboundPost,
  ): Promise<OutboundResponse> {
    const host = bareHost(url);
    // The only answer this connection's DNS lookup can give: the address the policy checked.
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all) {
        (callback as (e: null, a: ResolvedAddress[]) => void)(null, [pinned]);
      } else callback(null, pinned.address, pinned.family);
    };
    const https = url.protocol === 'https:';
    return new Promise<OutboundResponse>((resolve, reject) => {
      let settled = false;
      const fail = (message: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(total);
        clearTimeout(connect);
        req.destroy();
        reject(new OutboundError(message, url.href));
      };
      const req = (https ? httpsRequest : httpRequest)({
        protocol: url.protocol,
        hostname: isIP(host) ? pinned.address : host,
        port: url.port || (https ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: post ? 'POST' : 'GET',
        headers: {
          accept,
          'accept-encoding': 'identity',
          'user-agent': 'gatehouse',
          ...(post ? { ...post.headers, 'content-length': String(post.body.length) } : {}),
          host: url.host,
        },
        agent: false,
        lookup,
        ...(https && !isIP(host) ? { servername: host } : {}),
      });
      const total = setTimeout(() => fail('timed out'), Math.max(0, deadline - Date.now()));
      const connect = setTimeout(
        () => fail('timed out connecting'),
        Math.max(0, Math.min(this.limits.connectTimeoutMs, deadline - Date.now())),
      );
      req.on('socket', (socket) => {
        socket.once(https ? 'secureConnect' : 'connect', () => clearTimeout(connect));
      });
      req.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
      req.on('response', (res) => {
        clearTimeout(connect);
        const status = res.statusCode ?? 0;
        if (post ? status < 200 || status > 299 : status !== 200) return fail(`answered ${status}`);
        const encoding = res.headers['content-encoding'];
        if (encoding && encoding !== 'identity') return fail(`answered content-encoding ${encoding}`);
        const declared = Number(res.headers['content-length']);
        if (res.headers['content-length'] !== undefined && !(declared <= maxBytes)) {
          return fail(`content-length ${res.headers['content-length']} is over ${maxBytes} bytes`);
        }
        const chunks: Buffer[] = [];
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > maxBytes) return fail(`the body is over ${maxBytes} bytes`);
          chunks.push(chunk);
        });
        res.on('aborted', () => fail('the connection closed before the end of the body'));
        res.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(total);
          req.destroy();
          resolve({ status, headers: res.headers, body: Buffer.concat(chunks) });
        });
      });
      req.end(post?.body);
    });
  }
}

function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out`)), Math.max(0, ms));
    }),
  ]).finally(() => clearTimeout(timer));
}
