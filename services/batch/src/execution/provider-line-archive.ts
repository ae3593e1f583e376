import type { Readable } from 'node:stream';
import type { CallArchiver } from '@gw/call-archive';
import type { Collection } from '@gw/store';
import type { BatchDoc } from '../batches/batch-records';
import { inputRequests } from '../batches/input-lines';
import { lineId, type LineDoc } from './batch-lines';

/** Input lines matched to their answers per store read. */
const ARCHIVE_PAGE = 100;

/**
 * Archives every answered line of a provider-executed batch under its own request id, like any call: the
 * line's request body from the input file and its output (or error) line. Run after the results were mapped
 * onto the lines, reading the input once more; a run that repeats it (after a restart) archives the same
 * records again, which billing keeps once.
 */
export async function archiveProviderLines(archive: CallArchiver, lines: Collection<LineDoc>, batch: BatchDoc, source: Readable, maxLineBytes: number): Promise<void> {
  if (archive.mode === 'off') return;
  let page: { line: number; body: unknown }[] = [];
  const flush = async () => {
    const docs = await lines.find({ _id: { $in: page.map((p) => lineId(batch._id, p.line)) }, output_json: { $ne: null } });
    const byLine = new Map(docs.map((d) => [d.line, d]));
    for (const { line, body } of page) {
      const doc = byLine.get(line);
      if (doc?.output_json) archive.record(lineRecord(batch, doc, body, doc.output_json));
    }
    page = [];
  };
  for await (const req of inputRequests(source, batch.endpoint, maxLineBytes)) {
    page.push({ line: req.line, body: req.body });
    if (page.length >= ARCHIVE_PAGE) await flush();
  }
  if (page.length > 0) await flush();
}

/** The output line as written (this service wrote it, so it parses; anything else is kept as text). */
function parsedOutput(outputJson: string): { response?: { body?: { id?: unknown } } | null } | null {
  try {
    return JSON.parse(outputJson) as { response?: { body?: { id?: unknown } } | null };
  } catch {
    return null;
  }
}

function lineRecord(batch: BatchDoc, doc: LineDoc, request: unknown, outputJson: string) {
  const output = parsedOutput(outputJson);
  const providerId = output?.response?.body?.id;
  return {
    requestId: doc.request_id, identity: { accountId: batch.account_id, keyHash: batch.identity.keyHash }, apiType: 'batch' as const,
    model: batch.client_model ?? '', providerResponseId: typeof providerId === 'string' ? providerId : '', streamed: false,
    request, response: output ?? outputJson, startedAtMs: doc.finished_at_ms ?? Date.now(), traceId: batch.trace_id,
    // Only a line the provider answered is billed (recordResults publishes its usage event).
    unbilled: doc.state !== 'succeeded',
  };
}
