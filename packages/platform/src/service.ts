import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Health } from './health';

/** A service's whole HTTP surface as one handler: what its port serves, callable in-process. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** What every service's start function returns, so main.ts, the local stack and tests drive them alike. */
export interface RunningService {
  name: string;
  httpPort: number;
  /** 0 when the service has no gRPC server. */
  grpcPort: number;
  health: Health;
  /**
   * The app its HTTP port serves (identity check, routers, error renderer), for a caller in the same process
   * to hand a request to without a loopback hop: only the transport differs.
   */
  httpHandler: HttpHandler;
  /** Graceful, in the chassis's one order (see `startService`). Engines are closed by the owner. */
  stop(): Promise<void>;
}
