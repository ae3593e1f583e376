import type { Health } from './health';

/** What every service's start function returns, so main.ts, the local stack and tests drive them alike. */
export interface RunningService {
  name: string;
  httpPort: number;
  /** 0 when the service has no gRPC server. */
  grpcPort: number;
  health: Health;
  /** Graceful, in the chassis's one order (see `startService`). Engines are closed by the owner. */
  stop(): Promise<void>;
}
