import type { Health } from './health';

/** What every service's start function returns, so main.ts, the local stack and tests drive them alike. */
export interface RunningService {
  name: string;
  httpPort: number;
  /** 0 when the service has no gRPC server. */
  grpcPort: number;
  health: Health;
  /** Graceful: not ready, finish in-flight work, stop consumers, flush publishers. Engines are closed by the owner. */
  stop(): Promise<void>;
}
