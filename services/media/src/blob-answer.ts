import type { Readable } from 'node:stream';
import type { Request, Response } from 'express';
import rangeParser from 'range-parser';
import { BlobNotFoundError, type BlobStore, type GetOptions } from '@gw/blobs';
import { GatewayError, streamAnswer } from '@gw/platform';

/** Reads a stored blob, whole or the inclusive byte range given. */
export type BlobReader = (range?: GetOptions) => Promise<Readable>;

/** The reader of blob `key`; a blob deleted since its record was read is `gone()` (a 404), as it is a moment later. */
export function blobReader(blobs: BlobStore, key: string, gone: () => Error): BlobReader {
  return async (range) => {
    try {
      return await blobs.get(key, range);
    } catch (err) {
      throw err instanceof BlobNotFoundError ? gone() : err;
    }
  };
}

/**
 * Answers with a stored blob of `bytes` bytes, or with the one byte range a `Range` header asks for (206), as a
 * browser's video element asks to play and seek. A range that starts past the end is a 416; a header that is
 * malformed, of another unit or asks for several ranges gets the whole blob (RFC 9110 lets a server ignore it).
 * The caller has set the content type and disposition.
 */
export async function sendBlob(req: Request, res: Response, bytes: number, read: BlobReader, onReadError: (err: unknown) => void): Promise<void> {
  res.setHeader('accept-ranges', 'bytes');
  const header = req.headers.range;
  const ranges = header === undefined ? -2 : rangeParser(bytes, header, { combine: true });
  if (ranges === -1) {
    throw new GatewayError(`Range ${header} starts past the ${bytes} bytes of this media`, 416, 'invalid_request_error', 'range_not_satisfiable', 'Range', { 'content-range': `bytes */${bytes}` });
  }
  if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) {
    const { start, end } = ranges[0];
    res.status(206);
    res.setHeader('content-range', `bytes ${start}-${end}/${bytes}`);
    res.setHeader('content-length', String(end - start + 1));
    return streamAnswer(await read({ start, end }), res, onReadError);
  }
  res.setHeader('content-length', String(bytes));
  return streamAnswer(await read(), res, onReadError);
}
