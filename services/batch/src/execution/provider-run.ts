import type { Readable } from 'node:stream';
import type { Outbox } from '@gw/bus';
import type { CallArchiver } from '@gw/call-archive';
import { GatewayError, type Logger } from '@gw/platform';
import {
  isRetryableUpstreamError, isTerminalNativeBatchStatus, type ChatCompletionRequest, type NativeBatchHandle, type NativeBatchLine, type NativeBatchLineResult, type NativeBatchState,
} from '@gw/provider-spec';
import { TOPICS, type CallFailed, type UsageEvent } from '@gw/proto';
import { isClientError } from '@gw/billed-call';
import type { Collection } from '@gw/store';
import type { BatchDoc, BatchErrors, TerminalBatchStatus } from '../batches/batch-records';
import { inputRequests } from '../batches/input-lines';
import { lineId, linesInOrder, outputLineId, type LineDoc, type LineState } from './batch-lines';
import { archiveProviderLines } from './provider-line-archive';
import type { NativeBatchProviders, ProviderBatchRoute } from './provider-route';

export interface ProviderRunDeps {
  batches: Collection<BatchDoc>;
  lines: Collection<LineDoc>;
  outbox: Pick<Outbox, 'publish'>;
  providers: NativeBatchProviders;
  pollMs: number;
  maxLineBytes: number;
  logger: Logger;
  /** Each answered line's request and output, archived under the line's request id. */
  archive?: CallArchiver;
  now?: () => number;
}

export interface ProviderOutcome {
  outcome: TerminalBatchStatus;
  errors?: BatchErrors;
}

/** Upstream line keys: the provider restricts custom ids, so lines go up as `line-<n>` and the client's id stays here. */
const lineKey = (line: number) => `line-${line}`;
const lineOfKey = (key: string) => (/^line-(\d+)$/.test(key) ? Number(key.slice(5)) : null);
const RESULT_PAGE = 100;

const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((resolve, reject) => {
  if (signal.aborted) return reject(signal.reason);
  const timer = setTimeout(() => { signal.removeEventListener('abort', stop); resolve(); }, ms);
  const stop = () => { clearTimeout(timer); reject(signal.reason); };
  signal.addEventListener('abort', stop, { once: true });
});

/**
 * Runs a batch on the provider's own batch API, under the batch job's lease: submits the lines once (the
 * handle is stored, so any instance after any restart polls the same upstream batch), polls until it ends
 * (asking upstream to cancel once the batch is `cancelling`), then maps the results onto the lines. Each
 * answered line is billed by a usage event (api_type `batch`, the line's request id, the batch price) sent
 * through the outbox before the line is marked answered, so a crash in between sends it again and billing
 * keeps it once. A line the provider answered with an error is reported as a failed call (the statistics).
 */
export async function runProviderBatch(deps: ProviderRunDeps, batch: BatchDoc, input: () => Promise<Readable>, signal: AbortSignal): Promise<ProviderOutcome> {
  const log = deps.logger.child({ batchId: batch._id });
  const route = deps.providers.route(batch.deployment_id!);
  let handle: NativeBatchHandle;
  if (batch.provider_handle_json) {
    handle = storedHandle(batch.provider_handle_json);
  } else {
    // Cancelled before anything went upstream: nothing to submit (the lines end batch_cancelled).
    if ((await deps.batches.findOne({ _id: batch._id }))?.status === 'cancelling') return { outcome: 'cancelled' };
    const source = await input();
    const lines = (async function* (): AsyncGenerator<NativeBatchLine> {
      for await (const req of inputRequests(source, batch.endpoint, deps.maxLineBytes)) {
        yield { custom_id: lineKey(req.line), request: req.body as unknown as ChatCompletionRequest };
      }
    })();
    try {
      handle = await route.provider.submit(lines, route.target, { gatewayBatchId: batch._id, idempotencyKey: batch._id }, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      // A refusal (a line the provider cannot take, a rejected upload) fails the batch; an outage or rate limit
      // is thrown, and the run tries the submit again (same idempotency key) after a pause.
      if (err instanceof GatewayError && !isRetryableUpstreamError(err) && err.status < 500) {
        return { outcome: 'failed', errors: upstreamErrors(err.message, err.code, 'submitting', err.status) };
      }
      throw err;
    }
    await deps.batches.updateOne({ _id: batch._id }, { $set: { provider_handle_json: JSON.stringify(handle) } });
    log.info({ upstreamBatchId: handle.id }, 'submitted to the provider batch API');
  }

  const state = await pollToEnd(deps, batch, route, handle, signal);
  // Set when the results file could not be read on (a line cut short, or past its bound).
  let unreadable: GatewayError | null = null;
  if (state.hasResults) {
    try {
      await recordResults(deps, batch, route, route.provider.results(handle, route.target, signal));
    } catch (err) {
      // The same file would fail the same way on every try: its lines not recorded by then fail with this error.
      // An outage (retryable) is thrown, and the run reads the file again after a pause.
      if (signal.aborted || !(err instanceof GatewayError) || isRetryableUpstreamError(err)) throw err;
      log.warn({ err: err.message, upstreamBatchId: handle.id }, 'the provider batch results could not be read on; the lines not read fail');
      unreadable = err;
    }
    if (deps.archive) await archiveProviderLines(deps.archive, deps.lines, batch, await input(), deps.maxLineBytes);
  }
  const settled: Record<string, LineState> = { expired: 'expired', cancelled: 'cancelled', completed: 'failed', failed: 'failed' };
  const unanswered = unreadable ? 'failed' : settled[state.status];
  const failure = unreadable ? { code: unreadable.code, message: unreadable.message }
    : state.error ?? { code: 'missing_result', message: 'The provider returned no result for this request' };
  for await (const doc of linesInOrder(deps.lines, batch._id, { state: 'pending' })) {
    const output = unanswered === 'failed'
      ? JSON.stringify({ id: outputLineId(doc.request_id), custom_id: doc.custom_id, response: null, error: { code: failure.code, message: failure.message } })
      : null;
    await deps.lines.updateOne({ _id: doc._id, state: 'pending' }, { $set: { state: unanswered, output_json: output, finished_at_ms: (deps.now ?? Date.now)() } });
  }
  if (state.status === 'failed') {
    const e = state.error ?? { code: 'upstream_batch_failed', message: `The provider batch ended ${state.upstreamStatus}` };
    return { outcome: 'failed', errors: upstreamErrors(e.message, e.code, 'in_progress', e.upstreamStatus) };
  }
  return { outcome: state.status === 'in_progress' || state.status === 'cancelling' ? 'failed' : state.status };
}

/** The handle this service stored at submit; unreadable only if the record was damaged, which fails the run loudly. */
function storedHandle(json: string): NativeBatchHandle {
  try {
    return JSON.parse(json) as NativeBatchHandle;
  } catch {
    throw new Error('The stored provider batch handle is not JSON');
  }
}

function upstreamErrors(message: string, code: string, stage: string, upstreamStatus?: number): BatchErrors {
  return {
    message: `The provider batch failed: ${message}`, code, type: 'upstream_error', stage,
    ...(upstreamStatus !== undefined ? { upstream_http_status: upstreamStatus } : {}), upstream_message: message,
    object: 'list', data: [{ code, message, param: null, line: null }],
  };
}

/** Polls until the upstream batch is terminal, mirroring its counts and passing a cancel on once. */
async function pollToEnd(deps: ProviderRunDeps, batch: BatchDoc, route: ProviderBatchRoute, handle: NativeBatchHandle, signal: AbortSignal): Promise<NativeBatchState> {
  let cancelSent = batch.provider_cancel_sent;
  for (;;) {
    const current = await deps.batches.findOne({ _id: batch._id });
    if (current?.status === 'cancelling' && !cancelSent) {
      await route.provider.cancel(handle, route.target, signal);
      await deps.batches.updateOne({ _id: batch._id }, { $set: { provider_cancel_sent: true } });
      cancelSent = true;
    }
    const state = await route.provider.poll(handle, route.target, signal);
    if (state.counts) {
      await deps.batches.updateOne(
        { _id: batch._id, status: { $in: ['in_progress', 'cancelling'] } },
        { $set: { 'request_counts.completed': state.counts.succeeded, 'request_counts.failed': state.counts.failed } },
      );
    }
    if (isTerminalNativeBatchStatus(state.status)) return state;
    await sleep(deps.pollMs, signal);
  }
}

/** Maps the provider's results onto the lines, a page at a time: usage first (durably), then the lines' outputs. */
async function recordResults(deps: ProviderRunDeps, batch: BatchDoc, route: ProviderBatchRoute, results: AsyncIterable<NativeBatchLineResult>): Promise<void> {
  const now = deps.now ?? Date.now;
  let page: NativeBatchLineResult[] = [];
  const flush = async () => {
    const ids = page.map((r) => lineOfKey(r.custom_id)).filter((n): n is number => n !== null).map((n) => lineId(batch._id, n));
    const docs = new Map((await deps.lines.find({ _id: { $in: ids }, state: 'pending' })).map((d) => [d._id, d]));
    const writes: { doc: LineDoc; state: LineState; output: object }[] = [];
    const usage: { key: string; value: UsageEvent }[] = [];
    const failures: { key: string; value: CallFailed }[] = [];
    for (const r of page) {
      const n = lineOfKey(r.custom_id);
      const doc = n === null ? undefined : docs.get(lineId(batch._id, n));
      if (!doc) continue;
      const id = outputLineId(doc.request_id);
      if (r.outcome === 'succeeded') {
        const body = { ...r.completion, model: batch.client_model ?? r.completion.model };
        writes.push({ doc, state: 'succeeded', output: { id, custom_id: doc.custom_id, response: { status_code: 200, request_id: doc.request_id, body }, error: null } });
        usage.push({ key: batch.account_id, value: usageEvent(batch, route, doc, r, now()) });
      } else {
        const state: LineState = r.outcome === 'errored' ? 'failed' : r.outcome;
        if (r.outcome === 'errored') failures.push({ key: batch.account_id, value: failedLine(batch, route, doc, r.error, now()) });
        const response = r.error.upstreamStatus ? { status_code: r.error.upstreamStatus, request_id: doc.request_id, body: { error: { code: r.error.code, message: r.error.message } } } : null;
        writes.push({ doc, state, output: { id, custom_id: doc.custom_id, response, error: { code: r.error.code, message: r.error.message } } });
      }
    }
    if (usage.length > 0) await deps.outbox.publish(TOPICS.usage, usage);
    if (failures.length > 0) await deps.outbox.publish(TOPICS.callFailures, failures);
    for (const w of writes) {
      await deps.lines.updateOne({ _id: w.doc._id, state: 'pending' }, { $set: { state: w.state, output_json: JSON.stringify(w.output), finished_at_ms: now() } });
    }
    page = [];
  };
  try {
    for await (const r of results) {
      page.push(r);
      if (page.length >= RESULT_PAGE) await flush();
    }
  } finally {
    // The lines read before a failure are whole answers: recorded (and billed) whatever stopped the reading.
    await flush();
  }
}

function usageEvent(batch: BatchDoc, route: ProviderBatchRoute, doc: LineDoc, r: Extract<NativeBatchLineResult, { outcome: 'succeeded' }>, nowMs: number): UsageEvent {
  return {
    request_id: doc.request_id, account_id: batch.account_id, key_hash: batch.identity.keyHash, model: batch.client_model ?? '',
    provider: route.providerName, deployment: route.deployment.id, api_type: 'batch', provider_response_id: r.providerResponseId,
    served_model: r.completion.model ?? route.target.providerModel, streamed: false, cancelled: false,
    finish_reason: r.completion.choices?.[0]?.finish_reason ?? '', status: 'succeeded', usage: { ...r.usage } as UsageEvent['usage'],
    latency_ms: 0, generation_time_ms: 0, created_at_ms: nowMs, usage_estimated: false,
    // Provider batch lines hold no spend beforehand (the upstream answers them later): nothing to settle.
    hold_id: '', hold_micros: 0,
    media_ids: [],
    trace_id: batch.trace_id,
  };
}

function failedLine(batch: BatchDoc, route: ProviderBatchRoute, doc: LineDoc, error: { code: string; upstreamStatus?: number }, nowMs: number): CallFailed {
  const status = error.upstreamStatus ?? 502;
  return {
    request_id: doc.request_id, account_id: batch.account_id, key_hash: batch.identity.keyHash, model: batch.client_model ?? '',
    provider: route.providerName, api_type: 'batch', error_kind: error.code, status, client_error: isClientError(status), streamed: false,
    latency_ms: 0, created_at_ms: nowMs, trace_id: batch.trace_id,
  };
}
