import type * as grpc from '@grpc/grpc-js';
import { healthProto, type HealthHandlers } from '@gw/proto';

export type ReadinessCheck = () => Promise<boolean>;

/**
 * Liveness is "the process serves"; readiness is the truth about dependencies: every named check (store,
 * bus, ...) must pass, and a draining process reports not ready so the load balancer stops sending.
 */
export class Health {
  private readonly checks = new Map<string, ReadinessCheck>();
  private draining = false;

  addCheck(name: string, check: ReadinessCheck): this {
    this.checks.set(name, check);
    return this;
  }

  startDraining(): void {
    this.draining = true;
  }

  async report(): Promise<{ ready: boolean; checks: Record<string, boolean> }> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        try {
          return [name, await withTimeout(check(), 2000)] as const;
        } catch {
          return [name, false] as const;
        }
      }),
    );
    const checks = Object.fromEntries(entries);
    return { ready: !this.draining && entries.every(([, ok]) => ok), checks };
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
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timeout')), ms);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });
}
