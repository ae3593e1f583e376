import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { UpstreamAnswer } from './arrived-bytes-request';
import type { Deadline } from './deadline';
import { releaseAnswer, releasingIterable } from './releasing-iterable';
import { mapTransportError, oversizedUpstreamError } from './upstream-errors';
import { MAX_ANSWER_BYTES } from './upstream-json';

/** The body's chunks, refused once more than `maxLineBytes` arrived without a line end (`\n`). */
async function* boundedLineChunks(body: AsyncIterable<Uint8Array>, maxLineBytes: number): AsyncGenerator<Uint8Array> {
  let sinceLineEnd = 0;
  for await (const chunk of body) {
    const lastLineEnd = chunk.lastIndexOf(0x0a);
    sinceLineEnd = lastLineEnd === -1 ? sinceLineEnd + chunk.length : chunk.length - lastLineEnd - 1;
    if (sinceLineEnd > maxLineBytes) throw oversizedUpstreamError('results line', maxLineBytes);
    yield chunk;
  }
}

/**
 * The non-blank lines of a 2xx answer (a JSONL results file), read as they arrive so a large file is never
 * held whole, and no line past `maxLineBytes` (each line is one call's answer). Failures become typed errors;
 * the connection is released however iteration stops.
 */
export function upstreamLines(res: UpstreamAnswer, deadline: Deadline, maxLineBytes = MAX_ANSWER_BYTES): AsyncIterable<string> {
  // From here on the per-request bodyTimeout bounds each gap in the body; a long file is fine.
  deadline.stopTimer();
  const body = res.body;
  const release = () => releaseAnswer(body, deadline);
  async function* run(): AsyncGenerator<string> {
    try {
      for await (const line of createInterface({ input: Readable.from(boundedLineChunks(body, maxLineBytes)), crlfDelay: Infinity })) {
        if (line.trim() !== '') yield line;
      }
    } catch (err) {
      throw mapTransportError(err, deadline);
    } finally {
      release();
    }
  }
  return releasingIterable(run(), release);
}
