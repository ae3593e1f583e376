import type { ServerResponse } from 'node:http';

/**
 * Bytes of request bodies admitted at once. The services behind the edge read a JSON or form body whole before
 * they act on it, each bounded by its route's limit but not together: two hundred media requests of 32 MiB at
 * once would ask the single-machine gateway for 6 GiB. A request holds its declared length (or, sent without one,
 * its route's limit) from admission until its response closes; one that does not fit beside the others is
 * refused before a byte of its body is read. Bodies streamed to the blob store (file uploads) are not counted.
 */
export class BodyBudget {
  private heldBytes = 0;

  /** `limitBytes` 0: no budget. */
  constructor(private readonly limitBytes: number) {}

  get held(): number {
    return this.heldBytes;
  }

  /** Holds `bytes` until `res` closes; false, holding nothing, when they do not fit beside what is held. */
  holdUntilClosed(bytes: number, res: ServerResponse): boolean {
    if (this.limitBytes === 0 || bytes <= 0) return true;
    if (this.heldBytes + bytes > this.limitBytes) return false;
    this.heldBytes += bytes;
    res.once('close', () => {
      this.heldBytes -= bytes;
    });
    return true;
  }
}

/** What a request's body may occupy: its declared length, else (chunked) the route's limit; 0 without a body. */
export function bodyBytesOf(headers: { 'content-length'?: string; 'transfer-encoding'?: string }, routeLimit: number): number {
  const declared = headers['content-length'];
  if (declared !== undefined) return Number(declared) || 0;
  return headers['transfer-encoding'] !== undefined ? routeLimit : 0;
}
