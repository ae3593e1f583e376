import type { Readable } from 'node:stream';
import { newRequestId } from '@gw/platform';
import type { Collection, Doc, Store } from '@gw/store';
import { inputRequests } from '../batches/input-lines';

/**
 * `pending`: not answered yet (its request id is already fixed, so any re-send after a restart is the same
 * call to inference, which replays it). `succeeded` / `failed`: answered, with its output line written.
 * `cancelled` / `expired`: never ran; their error lines are made when the files are written.
 */
export type LineState = 'pending' | 'succeeded' | 'failed' | 'cancelled' | 'expired';

export interface LineDoc extends Doc {
  batch_id: string;
  /** Line number in the input file. */
  line: number;
  custom_id: string;
  /** `br-<UUIDv4>`, fixed before the line is first sent: the id it is billed under, whoever sends it. */
  request_id: string;
  state: LineState;
  /** The output or error file line (JSON text), once answered. */
  output_json: string | null;
  finished_at_ms: number | null;
}

export const lineId = (batchId: string, line: number) => `${batchId}:${line}`;

/** The output line id: stable per line, so a re-written file has the same ids. */
export const outputLineId = (requestId: string) => `batch_req_${requestId.replace(/^br-/, '').replace(/-/g, '')}`;

export function linesCollection(store: Store): Collection<LineDoc> {
  return store.collection<LineDoc>('batch_lines');
}

export async function ensureLineIndexes(lines: Collection<LineDoc>): Promise<void> {
  await lines.ensureIndex({ fields: { batch_id: 1, state: 1, line: 1 } });
  await lines.ensureIndex({ fields: { batch_id: 1, line: 1 } });
}

const PAGE = 500;

/**
 * One record per input line, each with its request id, written before any line is sent. Idempotent: a run
 * that died halfway is completed by the next, and lines already recorded keep their request ids.
 */
export async function prepareLines(lines: Collection<LineDoc>, batchId: string, input: Readable, endpoint: string, maxLineBytes: number): Promise<number> {
  let page: LineDoc[] = [];
  let total = 0;
  const flush = async () => {
    if (page.length > 0) await lines.insertMany(page, { ignoreDuplicates: true });
    page = [];
  };
  for await (const req of inputRequests(input, endpoint, maxLineBytes)) {
    total++;
    page.push({
      _id: lineId(batchId, req.line), batch_id: batchId, line: req.line, custom_id: req.custom_id, request_id: newRequestId(),
      state: 'pending', output_json: null, finished_at_ms: null,
    });
    if (page.length >= PAGE) await flush();
  }
  await flush();
  return total;
}

/** Every line of a batch in file order, read a page at a time. */
export async function* linesInOrder(lines: Collection<LineDoc>, batchId: string, filter: Record<string, unknown> = {}): AsyncGenerator<LineDoc> {
  let after = 0;
  for (;;) {
    const page = await lines.find({ batch_id: batchId, line: { $gt: after }, ...filter }, { sort: { line: 1 }, limit: PAGE });
    for (const doc of page) yield doc;
    if (page.length < PAGE) return;
    after = page[page.length - 1].line;
  }
}

export async function countLines(lines: Collection<LineDoc>, batchId: string) {
  const [succeeded, failed, cancelled, expired, pending] = await Promise.all(
    (['succeeded', 'failed', 'cancelled', 'expired', 'pending'] as const).map((state) => lines.count({ batch_id: batchId, state })),
  );
  return { succeeded, failed: failed + cancelled + expired, pending };
}
