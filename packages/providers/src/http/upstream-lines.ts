import { createInterface } from 'node:readline';
import type { Dispatcher } from 'undici';
import type { Deadline } from './deadline';
import { releasingIterable } from './releasing-iterable';
import { mapTransportError } from './upstream-errors';

/**
 * The non-blank lines of a 2xx answer (a JSONL results file), read as they arrive so a large file is never
 * held whole. Failures become typed errors; the connection is released however iteration stops.
 */
export function upstreamLines(res: Dispatcher.ResponseData, deadline: Deadline): AsyncIterable<string> {
  // From here on the per-request bodyTimeout bounds each gap in the body; a long file is fine.
  deadline.stopTimer();
  const body = res.body;
  const release = () => {
    if (!body.destroyed) {
      // undici reports a destroy before the end as an 'error' event; nobody is left to hear it.
      body.on('error', () => {});
      body.destroy();
    }
    deadline.dispose();
  };
  async function* run(): AsyncGenerator<string> {
    try {
      for await (const line of createInterface({ input: body, crlfDelay: Infinity })) {
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
