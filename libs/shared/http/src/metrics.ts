import type { NextFunction, Request, Response } from 'express';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { UNMATCHED_ROUTE, type RouteTable } from './route-table.js';

/**
 * One prom-client Registry per app (no global registry: tests run several apps in one process).
 * `route` is the route pattern, never the raw path, so label cardinality stays bounded.
 */
export class HttpMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'method' | 'route' | 'status'>;
  readonly duration: Histogram<'method' | 'route' | 'status'>;

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
  }

  /** Express middleware recording every finished request. */
  middleware(routes: RouteTable) {
    return (req: Request, res: Response, next: NextFunction) => {
      const stop = this.duration.startTimer();
      res.once('finish', () => {
        const method = req.method.toUpperCase();
        const path = req.originalUrl.split('?')[0];
        const route = routes.resolve(method, path) ?? routes.resolveAnyMethod(path) ?? UNMATCHED_ROUTE;
        const labels = { method, route, status: String(res.statusCode) };
        this.requests.inc(labels);
        stop(labels);
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
