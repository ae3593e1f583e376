import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds buckets of calls to providers: from a cached answer to a long generation. */
const UPSTREAM_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** What a job queue reports when scraped. */
export interface JobQueueStats {
  queued: number;
  inProgress: number;
  /** Age of the oldest queued job in milliseconds (0 when none waits). */
  oldestQueuedAgeMs: number;
}

/** What a bus consumer reports when scraped: messages not yet consumed, per topic. */
export type ConsumerLag = () => Promise<Record<string, number>>;

/**
 * A path as a metric label: ids (segments with a digit, other than the version) become `:id`, so the series
 * stay few however many objects are called.
 */
export function routeLabel(url: string): string {
  const path = url.split('?')[0] ?? '';
  return path.split('/').map((seg) => (/\d/.test(seg) && !/^v\d+$/.test(seg)) || seg.length > 40 ? ':id' : seg).join('/') || '/';
}

/**
 * One Prometheus registry per service instance (no global registry: several services may share a process).
 * The domain families are made on first use, so a service exposes only those it feeds.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route'>;
  private readonly families = new Map<string, unknown>();

  constructor(service: string, withDefaults = true) {
    this.registry.setDefaultLabels({ service });
    if (withDefaults) collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({ name: 'gw_http_requests_total', help: 'HTTP requests by route and status', labelNames: ['method', 'route', 'status'], registers: [this.registry] });
    this.httpDuration = new Histogram({
      name: 'gw_http_request_duration_seconds', help: 'HTTP request duration', labelNames: ['method', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30], registers: [this.registry],
    });
  }

  httpMiddleware(): RequestHandler {
    return (req, res, next) => {
      const start = process.hrtime.bigint();
      res.once('finish', () => {
        const route = routeLabel(req.originalUrl);
        this.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
        this.httpDuration.observe({ method: req.method, route }, Number(process.hrtime.bigint() - start) / 1e9);
      });
      next();
    };
  }

  /** Calls to providers (inference): outcomes, latency, time to first token, tokens. */
  get calls() {
    return this.family('calls', (registers) => ({
      total: new Counter({ name: 'gw_provider_calls_total', help: 'Provider attempts by model, provider and status (HTTP status, or ok)', labelNames: ['model', 'provider', 'status'], registers }),
      latency: new Histogram({ name: 'gw_upstream_latency_seconds', help: 'Billed calls from start to end, by model and provider', labelNames: ['model', 'provider'], buckets: UPSTREAM_BUCKETS, registers }),
      timeToFirstToken: new Histogram({ name: 'gw_time_to_first_token_seconds', help: 'Billed calls from start to their first byte from the provider', labelNames: ['model', 'provider'], buckets: UPSTREAM_BUCKETS, registers }),
      tokens: new Counter({ name: 'gw_tokens_total', help: 'Tokens of billed calls by model, provider and kind (input, output)', labelNames: ['model', 'provider', 'kind'], registers }),
    }));
  }

  /** The deployment router (inference): retries, fallbacks, cooldowns. */
  get routing() {
    return this.family('routing', (registers) => ({
      retries: new Counter({ name: 'gw_upstream_retries_total', help: 'Retries of one deployment after a retryable failure', labelNames: ['provider', 'deployment'], registers }),
      fallbacks: new Counter({ name: 'gw_upstream_fallbacks_total', help: 'Calls moved on from a failed deployment to the next one', labelNames: ['model', 'deployment'], registers }),
      cooldowns: new Counter({ name: 'gw_deployment_cooldowns_total', help: 'Deployments put in cooldown after consecutive failures', labelNames: ['deployment'], registers }),
    }));
  }

  /** Charges posted by billing, in micro-dollars: list price and charged (after the account's price factor). */
  get cost() {
    return this.family('cost', (registers) => ({
      micros: new Counter({ name: 'gw_cost_micros_total', help: 'Cost of billed calls in micro-USD by model, provider and kind (list, charged)', labelNames: ['model', 'provider', 'kind'], registers }),
    }));
  }

  /** Webhook delivery attempts by outcome (succeeded, failed) and deliveries given up (abandoned). */
  get webhooks() {
    return this.family('webhooks', (registers) => ({
      deliveries: new Counter({ name: 'gw_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome (succeeded, failed), and deliveries given up after every attempt (abandoned)', labelNames: ['outcome'], registers }),
    }));
  }

  /** The edge: keys-service lookups and rate-limit refusals. */
  get edge() {
    return this.family('edge', (registers) => ({
      keyLookups: new Counter({ name: 'gw_edge_key_lookups_total', help: 'Keys-service lookups made by the edge, by outcome (valid, refused, unavailable)', labelNames: ['outcome'], registers }),
      rateLimited: new Counter({ name: 'gw_edge_rate_limited_total', help: 'Requests refused with 429 by the edge, by scope (key, account) and budget (requests, tokens)', labelNames: ['scope', 'budget'], registers }),
      bodyBudgetRefusals: new Counter({ name: 'gw_edge_body_budget_refusals_total', help: 'Requests refused with 503 server_busy because their body did not fit the body memory budget', registers }),
    }));
  }

  /** Reports at every scrape the bytes of request bodies the edge admitted whose responses have not closed. */
  watchBodyBudget(held: () => number): void {
    this.family('body-budget', (registers) => new Gauge({
      name: 'gw_edge_body_bytes_held', help: 'Bytes of request bodies admitted by the edge whose responses have not closed', registers,
      collect() { this.set(held()); },
    }));
  }

  /**
   * Reports at every scrape which deployments are in cooldown (1) and which take calls (0), so an operator
   * sees a cooling deployment while it lasts, not only that one started (gw_deployment_cooldowns_total).
   */
  watchCooldowns(cooling: () => Map<string, boolean>): void {
    this.family('cooldown', (registers) => new Gauge({
      name: 'gw_deployment_cooling', help: 'Deployments skipped for now after consecutive failures (1), or taking calls (0)', labelNames: ['deployment'], registers,
      collect() {
        this.reset();
        for (const [deployment, isCooling] of cooling()) this.set({ deployment }, isCooling ? 1 : 0);
      },
    }));
  }

  /** Reports a job queue's depth and the age of its oldest queued job at every scrape. */
  watchJobQueue(kind: string, stats: () => Promise<JobQueueStats>): void {
    const { sources } = this.family('jobs', (registers) => {
      const sources = new Map<string, () => Promise<JobQueueStats>>();
      // A store that cannot answer leaves its kind out of this scrape rather than failing the whole scrape.
      const readAll = async () => (await Promise.all([...sources].map(async ([k, read]) => [k, await read().catch(() => null)] as const)))
        .filter((e): e is readonly [string, JobQueueStats] => e[1] !== null);
      new Gauge({
        name: 'gw_jobs_queue_depth', help: 'Jobs by kind and state (queued, in_progress)', labelNames: ['kind', 'state'], registers,
        async collect() {
          this.reset();
          for (const [k, s] of await readAll()) {
            this.set({ kind: k, state: 'queued' }, s.queued);
            this.set({ kind: k, state: 'in_progress' }, s.inProgress);
          }
        },
      });
      new Gauge({
        name: 'gw_jobs_oldest_queued_age_seconds', help: 'Age of the oldest queued job by kind', labelNames: ['kind'], registers,
        async collect() {
          this.reset();
          for (const [k, s] of await readAll()) this.set({ kind: k }, s.oldestQueuedAgeMs / 1000);
        },
      });
      return { sources };
    });
    sources.set(kind, stats);
  }

  /** Reports a bus consumer group's lag per topic at every scrape (where the bus engine can tell it). */
  watchConsumerLag(group: string, lag: ConsumerLag): void {
    const { groups } = this.family('bus', (registers) => {
      const groups = new Map<string, ConsumerLag>();
      new Gauge({
        name: 'gw_bus_consumer_lag', help: 'Messages published but not yet consumed, by consumer group and topic', labelNames: ['group', 'topic'], registers,
        async collect() {
          this.reset();
          for (const [g, read] of groups) {
            for (const [topic, n] of Object.entries(await read().catch(() => ({})))) this.set({ group: g, topic }, n);
          }
        },
      });
      return { groups };
    });
    groups.set(group, lag);
  }

  private family<T>(name: string, make: (registers: Registry[]) => T): T {
    if (!this.families.has(name)) this.families.set(name, make([this.registry]));
    return this.families.get(name) as T;
  }
}
