import * as grpc from '@grpc/grpc-js';
import { Gauge } from 'prom-client';
import { healthProto, type HealthHandlers } from '@gw/proto';
import type { Logger } from './logger';
import type { Metrics } from './metrics';

export type ReadinessCheck = () => Promise<boolean>;

/**
 * `required`: the instance cannot serve without it (its store; the edge's keys service), so it is not ready
 * while the check fails. `degraded`: a working fallback serves meanwhile (the bus behind an outbox, a
 * consumer still joining), so a failure is reported, never a reason to take the instance out of rotation.
 */
export type DependencyKind = 'required' | 'degraded';

export interface ReadinessReport {
  ready: boolean;
  /** Every dependency by name: true when its check passed. */
  checks: Record<string, boolean>;
  /** The `degraded` dependencies that are down now: the instance serves through their fallbacks. */
  degraded: string[];
}

export interface HealthOptions {
  /** Dependency state changes are logged here. */
  logger?: Logger;
  /** Gets the gauge `gw_dependency_up{dependency,kind}` (1 up, 0 down), refreshed by probes and scrapes. */
  metrics?: Metrics;
}

interface Dependency {
  check: ReadinessCheck;
  kind: DependencyKind;
  /** Last outcome; undefined until first checked. */
  up?: boolean;
}

/**
 * Readiness means "this instance can serve": every `required` check passes and the process is not draining
 * (a draining process reports not ready so the load balancer stops sending). Liveness is "the process serves".
 */
export class Health {
  private readonly dependencies = new Map<string, Dependency>();
  private readonly gauge?: Gauge<'dependency' | 'kind'>;
  private draining = false;

  constructor(private readonly opts: HealthOptions = {}) {
    if (opts.metrics) {
      this.gauge = new Gauge({
        name: 'gw_dependency_up', help: 'Dependency reachable (1) or not (0), by kind (required or degraded)',
        labelNames: ['dependency', 'kind'], registers: [opts.metrics.registry],
        // A scrape re-checks, so the gauge is current even where no probe calls /readyz.
        collect: async () => { await this.report(); },
      });
    }
  }

  addCheck(name: string, check: ReadinessCheck, kind: DependencyKind = 'required'): this {
    this.dependencies.set(name, { check, kind });
    return this;
  }

  startDraining(): void {
    this.draining = true;
  }

  async report(): Promise<ReadinessReport> {
    const entries = await Promise.all(
      [...this.dependencies].map(async ([name, dep]) => {
        let up: boolean;
        try {
          up = await withTimeout(dep.check(), 2000);
        } catch {
          up = false;
        }
        this.record(name, dep, up);
        return [name, dep, up] as const;
      }),
    );
    return {
      ready: !this.draining && entries.every(([, dep, up]) => up || dep.kind === 'degraded'),
      checks: Object.fromEntries(entries.map(([name, , up]) => [name, up])),
      degraded: entries.filter(([, dep, up]) => !up && dep.kind === 'degraded').map(([name]) => name),
    };
  }

  /** Registers grpc.health.v1.Health on a server, answering from the same checks. */
  register(server: grpc.Server): void {
    const handlers: HealthHandlers = {
      Check: (_call, cb) => {
        this.report().then(({ ready }) => cb(null, { status: ready ? 'SERVING' : 'NOT_SERVING' }));
      },
      Watch: (call) => {
        // Probes use Check; Watch sends the current status once so clients see a truthful answer.
        this.report().then(({ ready }) => {
          call.write({ status: ready ? 'SERVING' : 'NOT_SERVING' });
          call.end();
        });
      },
    };
    server.addService(healthProto.grpc.health.v1.Health.service, handlers);
  }

  private record(name: string, dep: Dependency, up: boolean): void {
    this.gauge?.set({ dependency: name, kind: dep.kind }, up ? 1 : 0);
    const was = dep.up;
    dep.up = up;
    // The first check logs only trouble; after that, every change either way.
    if (was === up || (was === undefined && up)) return;
    const log = this.opts.logger;
    if (up) log?.info({ dependency: name, kind: dep.kind }, 'dependency is back');
    else if (dep.kind === 'required') log?.error({ dependency: name, kind: dep.kind }, 'required dependency is down: not ready');
    else log?.warn({ dependency: name, kind: dep.kind }, 'dependency is down: serving degraded through its fallback');
  }
}

/**
 * A readiness check on another service's grpc.health.v1: passes only while that service reports SERVING
 * (reachable is not enough: a keys service whose store is down cannot authenticate anyone).
 *
 * Given the client the service's calls go through, the check rides that client's own channel: a separate
 * channel can be connected while the calls' channel still waits out its reconnect back-off after an outage,
 * and readiness would then promise calls that fail.
 */
export function grpcServingCheck(target: string | grpc.Client, timeoutMs = 1500): { check: ReadinessCheck; close(): void } {
  const client = typeof target === 'string'
    ? new healthProto.grpc.health.v1.Health(target, grpc.credentials.createInsecure())
    : new healthProto.grpc.health.v1.Health('unused', grpc.credentials.createInsecure(), { channelOverride: target.getChannel() });
  return {
    check: () => new Promise<boolean>((resolve) => {
      try {
        client.Check({ service: '' }, { deadline: Date.now() + timeoutMs }, (err, res) => resolve(!err && res?.status === 'SERVING'));
      } catch {
        resolve(false); // the channel is shut down
      }
    }),
    // A shared channel belongs to the calls' client, which closes it.
    close: () => { if (typeof target === 'string') client.close(); },
  };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timeout')), ms);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });
}
