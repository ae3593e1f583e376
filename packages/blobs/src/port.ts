import type { Readable } from 'node:stream';
import { PayloadTooLargeError } from '@gw/platform';

/**
 * The blob port: named byte streams (uploaded files, batch outputs, media). Engines: the local filesystem in
 * the single-machine mode, MongoDB GridFS in the distributed mode; one contract suite runs against both.
 */

export interface BlobInfo {
  key: string;
  bytes: number;
  /** Epoch milliseconds the blob was written. */
  createdAtMs: number;
}

export interface PutOptions {
  /** The write fails with `BlobTooLargeError` as soon as more bytes than this arrive; nothing is kept. */
  maxBytes?: number;
  /**
   * The caller never put this key before (its keys are unique): the put does not look for older revisions to
   * remove. Putting the same content again (a redelivery) may then leave a second revision: reads take the
   * newest, and `delete` removes every one.
   */
  keyIsNew?: boolean;
}

export interface GetOptions {
  /** First byte, inclusive. */
  start?: number;
  /** Last byte, inclusive (as HTTP ranges count). */
  end?: number;
}

export interface BlobStore {
  readonly engine: string;
  /**
   * Streams `source` into the blob `key`, replacing any blob of that key only once every byte is in: a
   * reader never sees a half-written blob, and a failed write leaves nothing behind.
   */
  put(key: string, source: Readable, opts?: PutOptions): Promise<BlobInfo>;
  /** The blob's bytes (or the range asked for); `BlobNotFoundError` when there is no such blob. */
  get(key: string, opts?: GetOptions): Promise<Readable>;
  /** Null when there is no such blob. */
  stat(key: string): Promise<BlobInfo | null>;
  /** True when a blob was removed. */
  delete(key: string): Promise<boolean>;
  /** Every blob whose key starts with `prefix`, in key order. */
  list(prefix: string): Promise<BlobInfo[]>;
  close(): Promise<void>;
}

export class BlobNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`No blob '${key}'`);
    this.name = 'BlobNotFoundError';
  }
}

/** A put that went past its byte limit: a 413 for whoever streamed it. */
export class BlobTooLargeError extends PayloadTooLargeError {
  constructor(readonly maxBytes: number) {
    super(`The content exceeds ${maxBytes} bytes`);
  }
}

/**
 * Keys are slash-separated segments of letters, digits, `_`, `-` and `.` (no segment of dots only), so a key
 * can never name a path outside the engine's root nor collide with its temporary names.
 */
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$/;

export function checkBlobKey(key: string): string {
  const segments = key.split('/');
  if (key.length > 1024 || segments.some((s) => !SEGMENT.test(s))) throw new RangeError(`Invalid blob key '${key}'`);
  return key;
}

/** Prefixes may end in a partial segment (`files/acct_1/file-`), so only their characters are checked. */
export function checkBlobPrefix(prefix: string): string {
  if (prefix.length > 1024 || !/^[A-Za-z0-9_./-]*$/.test(prefix) || prefix.split('/').some((s) => s === '..' || s === '.')) {
    throw new RangeError(`Invalid blob prefix '${prefix}'`);
  }
  return prefix;
}
