import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** One Prometheus registry per service instance (no global registry: several services may share a process). */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'method' | 'status'>;
  readonly httpDuration: Histogram<'method'>;

  constructor(service: string, withDefaults = true) {
    this.registry.setDefaultLabels({ service });
    if (withDefaults) collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({ name: 'gw_http_requests_total', help: 'HTTP requests by status', labelNames: ['method', 'status'], registers: [this.registry] });
    this.httpDuration = new Histogram({
      name: 'gw_http_request_duration_seconds', help: 'HTTP request duration', labelNames: ['method'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30], registers: [this.registry],
    });
  }

  httpMiddleware(): RequestHandler {
    return (req, res, next) => {
      const start = process.hrtime.bigint();
      res.once('finish', () => {
        this.httpRequests.inc({ method: req.method, status: String(res.statusCode) });
        this.httpDuration.observe({ method: req.method }, Number(process.hrtime.bigint() - start) / 1e9);
      });
      next();
    };
  }
}
