import type { IncomingMessage } from 'node:http';
import type { Identity } from './identity';

/** What the edge verified about a request it hands to a service in its own process. */
export interface HandedIdentity {
  /** The authenticated key; null on an anonymous route. */
  identity: Identity | null;
  traceId: string;
}

/**
 * Identities handed to one service by a caller in the same process (the edge, in the single-machine mode).
 * They ride the request object itself, which no client can reach, so unlike a token there is nothing to sign,
 * expire or replay: only code holding the service's `RunningService` can hand one in, and each is taken once.
 */
export class HandedIdentities {
  private readonly byRequest = new WeakMap<IncomingMessage, HandedIdentity>();

  handIn(req: IncomingMessage, handed: HandedIdentity): void {
    this.byRequest.set(req, handed);
  }

  take(req: IncomingMessage): HandedIdentity | undefined {
    const handed = this.byRequest.get(req);
    if (handed) this.byRequest.delete(req);
    return handed;
  }
}
