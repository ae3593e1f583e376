import type { Readable } from 'node:stream';
import type {
  ChatCompletionRequest, ChatTarget, NativeBatchHandle, NativeBatchLine, NativeBatchLineResult, NativeBatchProvider, NativeBatchState, NativeBatchSubmitOptions,
} from '@gw/provider-spec';
import type { UpstreamAnswer } from '../http/arrived-bytes-request';
import type { Deadline } from '../http/deadline';
import { OriginPools } from '../http/origin-pools';
import { requestUpstream } from '../http/post-upstream';
import { callUpstream, openUpstreamStream } from '../http/upstream-call';
import { readJsonAnswer } from '../http/upstream-json';
import { batchCallErrors } from '../http/upstream-errors';
import { upstreamLines } from '../http/upstream-lines';
import { anthropicMessageBatchSchema } from './anthropic-batch-api';
import { mapAnthropicHttpError } from './anthropic-error';
import { requestHeaders } from './anthropic-http';
import { convertAnthropicBatchResultLine, convertAnthropicBatchState } from './convert-from-anthropic-batch';
import { messageBatchUpload, type AnthropicReadHint } from './convert-to-anthropic-batch';
import { ANTHROPIC_CAPABILITIES, convertToAnthropicRequest } from './convert-to-anthropic-request';

const BATCH_ERRORS = batchCallErrors(mapAnthropicHttpError);

/**
 * Anthropic's message batches: the lines sent in one `POST /messages/batches`, polled with
 * `GET /messages/batches/{id}`, their results read from `GET /messages/batches/{id}/results` (JSONL), cancelled
 * with `POST /messages/batches/{id}/cancel`. Each line's params are what the chat adapter sends, and each
 * answer is read by the chat adapter's mapper; how a line asked for JSON or reasoning travels in the handle.
 * The API keeps no metadata or idempotency key on a batch, so `gatewayBatchId` and `idempotencyKey` are not sent.
 */
export class AnthropicBatchProvider implements NativeBatchProvider {
  readonly kind = 'anthropic';
  readonly capabilities = ANTHROPIC_CAPABILITIES;

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  checkLine(request: ChatCompletionRequest, providerModel: string): void {
    convertToAnthropicRequest(request, providerModel, false);
  }

  async submit(lines: AsyncIterable<NativeBatchLine> | Iterable<NativeBatchLine>, target: ChatTarget, _options?: NativeBatchSubmitOptions, signal?: AbortSignal): Promise<NativeBatchHandle> {
    const upload = messageBatchUpload(lines, target.providerModel);
    const batch = await callUpstream(target, signal, async (deadline) => {
      try {
        const res = await this.call(target, deadline, 'POST', '/messages/batches', upload.body);
        return (await readJsonAnswer(res, anthropicMessageBatchSchema)).data;
      } catch (err) {
        throw upload.failure() ?? err;
      }
    });
    return { id: batch.id, context: { readHints: upload.readHints() } };
  }

  poll(handle: NativeBatchHandle, target: ChatTarget, signal?: AbortSignal): Promise<NativeBatchState> {
    return this.batchCall(handle, target, signal, 'GET', '');
  }

  /** Anthropic answers a cancel of an ended batch with the batch as it is, so no second look is needed. */
  cancel(handle: NativeBatchHandle, target: ChatTarget, signal?: AbortSignal): Promise<NativeBatchState> {
    return this.batchCall(handle, target, signal, 'POST', '/cancel');
  }

  async *results(handle: NativeBatchHandle, target: ChatTarget, signal?: AbortSignal): AsyncGenerator<NativeBatchLineResult> {
    const hints = (handle.context.readHints ?? {}) as Record<string, AnthropicReadHint>;
    const { res, deadline } = await openUpstreamStream(target, signal, (d) => this.call(target, d, 'GET', `/messages/batches/${encodeURIComponent(handle.id)}/results`));
    for await (const line of upstreamLines(res, deadline)) yield convertAnthropicBatchResultLine(line, hints);
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  private batchCall(handle: NativeBatchHandle, target: ChatTarget, signal: AbortSignal | undefined, method: 'GET' | 'POST', action: '' | '/cancel'): Promise<NativeBatchState> {
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.call(target, deadline, method, `/messages/batches/${encodeURIComponent(handle.id)}${action}`, method === 'POST' ? '{}' : undefined);
      return convertAnthropicBatchState((await readJsonAnswer(res, anthropicMessageBatchSchema)).data);
    });
  }

  private call(target: ChatTarget, deadline: Deadline, method: 'GET' | 'POST', endpoint: string, body?: string | Readable): Promise<UpstreamAnswer> {
    return requestUpstream(this.pools, target, {
      method,
      endpoint,
      headers: requestHeaders(target, { body: '', stream: false }),
      body,
      deadline,
      mapError: BATCH_ERRORS,
    });
  }
}
