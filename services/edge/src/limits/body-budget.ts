import type { ServerResponse } from 'node:http';

/**
 * Bytes of request bodies admitted at once. The services behind the edge read a JSON or form body whole before
 * they act on it, each bounded by its route's limit but not together: two hundred media requests of 32 MiB at
 * once would ask the single-machine gateway for 6 GiB. A request holds its declared length (or, sent without one,
 * its route's limit) from admission until its response closes; one that does not fit beside the others is
 * refused before a byte of its body is read. No account may hold more than half the budget, so one account's
 * flood of bodies (or of bodies sent slowly) leaves room for the others. Bodies streamed to the blob store (file
 * uploads) are not counted.
 */
export class BodyBudget {
  private heldBytes = 0;
  private readonly heldBy = new Map<string, number>();

  /** `limitBytes` 0: no budget. */
  constructor(private readonly limitBytes: number) {}

  get held(): number {
    return this.heldBytes;
  }

  /** The most one account may hold at once. */
  get accountShare(): number {
    return Math.floor(this.limitBytes / 2);
  }

  /** Holds `bytes` for `accountId` until `res` closes; false, holding nothing, when they do not fit. */
  holdUntilClosed(bytes: number, accountId: string, res: ServerResponse): boolean {
    if (this.limitBytes === 0 || bytes <= 0) return true;
    const account = this.heldBy.get(accountId) ?? 0;
    if (this.heldBytes + bytes > this.limitBytes || account + bytes > this.accountShare) return false;
    this.heldBytes += bytes;
    this.heldBy.set(accountId, account + bytes);
    res.once('close', () => {
      this.heldBytes -= bytes;
      const left = (this.heldBy.get(accountId) ?? 0) - bytes;
      if (left > 0) this.heldBy.set(accountId, left);
      else this.heldBy.delete(accountId);
    });
    return true;
  }
}

/**
 * What a request's body may occupy: its declared length (over the route's limit, refused before anything is
 * read or forwarded), else (chunked, bounded as it arrives) the route's limit; 0 without a body.
 */
export function bodyBytesOf(headers: { 'content-length'?: string; 'transfer-encoding'?: string }, routeLimit: number): number {
  const declared = headers['content-length'];
  if (declared !== undefined) return Number(declared) || 0;
  return headers['transfer-encoding'] !== undefined ? routeLimit : 0;
}
