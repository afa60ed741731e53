import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RouteMatch, RouteTable } from './route-table.js';

/** The route match of a request, set by the metrics middleware (first to need it) for the ones after it. */
export const ROUTE_MATCH = Symbol('gatehouse.routeMatch');

type MatchedRequest = Request & { [ROUTE_MATCH]?: RouteMatch };

/** The cached route match of `req` (method + path as the foundation middlewares see it). */
export function routeMatch(routes: RouteTable, req: Request): RouteMatch {
  const r = req as MatchedRequest;
  return (r[ROUTE_MATCH] ??= routes.match(req.method, req.path));
}

interface LabelledChildren {
  requests: { inc(value?: number): void };
  duration: { observe(value: number): void };
}

/** Distinct method/route/status children kept before the cache starts over (routes are patterns: few). */
const CHILDREN_CACHE_SIZE = 2_000;

/**
 * One prom-client Registry per app (no global registry: tests run several apps in one process).
 * `route` is the route pattern, never the raw path, so label cardinality stays bounded.
 */
export class HttpMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'route' | 'status'>;
  readonly duration: Histogram<'method' | 'route' | 'status'>;
  /** Audit events written by this process, by type and outcome (docs/events.md). */
  readonly events: Counter<'type' | 'outcome'>;

  constructor(serviceName: string) {
    this.registry.setDefaultLabels({ service: serviceName });
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration in seconds, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    this.events = new Counter({
      name: 'gatehouse_events_total',
      help: 'Audit events written, by event type and outcome',
      labelNames: ['type', 'outcome'],
      registers: [this.registry],
    });
  }

  /**
   * A gauge read at scrape time from `read` (nothing is done per request). A counter kept as a plain number by
   * its owner is exposed this way too (its name ends in `_total`).
   */
  gaugeFrom(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  private readonly children = new Map<string, LabelledChildren>();

  /** Counts one answered request and its duration (labelled children are created once per key). */
  record(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let c = this.children.get(key);
    if (c === undefined) {
      const labels = { method, route, status: String(status) };
      c = { requests: this.requests.labels(labels), duration: this.duration.labels(labels) };
      if (this.children.size >= CHILDREN_CACHE_SIZE) this.children.clear();
      this.children.set(key, c);
    }
    c.requests.inc();
    c.duration.observe(seconds);
  }

  /** Express middleware recording every finished request; resolves the route once (cached per path). */
  middleware(routes: RouteTable) {
    return (req: Request, res: Response, next: NextFunction) => {
      const start = process.hrtime.bigint();
      const match = routeMatch(routes, req);
      res.once('finish', () => {
        this.record(req.method, match.label, res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
      });
      next();
    };
  }

  contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
