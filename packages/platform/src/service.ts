import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HandedIdentity } from './handed-identity';
import type { Health } from './health';

/** A service's whole HTTP surface as one handler: what its port serves, callable in-process. */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** The same surface, given a request together with the identity its caller in this process verified. */
export type InProcessHandler = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void, handed: HandedIdentity) => void;

/** What every service's start function returns, so main.ts, the local stack and tests drive them alike. */
export interface RunningService {
  name: string;
  httpPort: number;
  /** 0 when the service has no gRPC server. */
  grpcPort: number;
  health: Health;
  /** The app its HTTP port serves: identity token check, routers, error renderer. */
  httpHandler: HttpHandler;
  /**
   * That app for a caller in the same process (the edge in the single-machine mode): no loopback hop, and the
   * identity is handed over as an object instead of a signed token. Routers and error rendering are the same.
   */
  handIn: InProcessHandler;
  /** Graceful, in the chassis's one order (see `startService`). Engines are closed by the owner. */
  stop(): Promise<void>;
}
