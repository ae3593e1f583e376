import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Streams `body` (a stored file, image, video) as the answer, whose headers are set. A client that leaves first
 * ends the read and closes its source (with `pipe` the file stayed open until garbage collection); a read that
 * fails part-way is passed to `onReadError` and cuts the answer, whose length was already promised.
 */
export async function streamAnswer(body: Readable, res: ServerResponse, onReadError: (err: unknown) => void): Promise<void> {
  try {
    await pipeline(body, res);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') onReadError(err);
  }
}
