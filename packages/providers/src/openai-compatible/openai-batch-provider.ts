import type { Readable } from 'node:stream';
import { isRetryableUpstreamError, isTerminalNativeBatchStatus } from '@gw/provider-spec';
import type {
  ChatCompletionRequest, ChatTarget, NativeBatchHandle, NativeBatchLine, NativeBatchLineResult, NativeBatchProvider, NativeBatchState, NativeBatchSubmitOptions,
} from '@gw/provider-spec';
import type { UpstreamAnswer } from '../http/arrived-bytes-request';
import type { Deadline } from '../http/deadline';
import { OriginPools } from '../http/origin-pools';
import { jsonRequestHeaders, requestUpstream } from '../http/post-upstream';
import { callUpstream, openUpstreamStream } from '../http/upstream-call';
import { readJsonAnswer } from '../http/upstream-json';
import { batchCallErrors } from '../http/upstream-errors';
import { upstreamLines } from '../http/upstream-lines';
import { convertOpenAIBatchResultLine, convertOpenAIBatchState } from './convert-from-openai-batch';
import { batchFileUpload, OPENAI_BATCH_ENDPOINT } from './convert-to-openai-batch';
import { convertToOpenAIChat, OPENAI_CAPABILITIES } from './convert-to-openai-chat';
import { openAIBatchSchema, openAIFileSchema, type OpenAIBatch } from './openai-batch-api';
import { OPENAI_DIALECT } from './openai-chat-provider';
import { mapOpenAIHttpError } from './openai-error';

const BATCH_ERRORS = batchCallErrors(mapOpenAIHttpError);

/**
 * OpenAI's batch API: the lines uploaded as a JSONL file (`POST /files`, purpose `batch`), a batch made of it
 * (`POST /batches`), polled (`GET /batches/{id}`), its output and error files read back
 * (`GET /files/{id}/content`), cancelled with `POST /batches/{id}/cancel`. Each line's body is what the chat
 * adapter sends, and each answer is read by the chat adapter's mapper.
 */
export class OpenAIBatchProvider implements NativeBatchProvider {
  readonly kind = OPENAI_DIALECT.kind;
  readonly capabilities = OPENAI_CAPABILITIES;

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  checkLine(request: ChatCompletionRequest, providerModel: string): void {
    convertToOpenAIChat(request, providerModel, false);
  }

  async submit(lines: AsyncIterable<NativeBatchLine> | Iterable<NativeBatchLine>, target: ChatTarget, options: NativeBatchSubmitOptions = {}, signal?: AbortSignal): Promise<NativeBatchHandle> {
    const upload = batchFileUpload(lines, target.providerModel);
    const file = await callUpstream(target, signal, async (deadline) => {
      try {
        const res = await this.call(target, deadline, 'POST', '/files', { body: upload.body, headers: { 'content-type': upload.contentType } });
        return (await readJsonAnswer(res, openAIFileSchema)).data;
      } catch (err) {
        throw upload.failure() ?? err;
      }
    });
    const batch = await callUpstream(target, signal, async (deadline) => {
      const body = JSON.stringify({
        input_file_id: file.id,
        endpoint: OPENAI_BATCH_ENDPOINT,
        completion_window: '24h',
        ...(options.gatewayBatchId ? { metadata: { gateway_batch_id: options.gatewayBatchId } } : {}),
      });
      const idempotency: Record<string, string> = options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {};
      const res = await this.call(target, deadline, 'POST', '/batches', { body, headers: { ...jsonRequestHeaders(target, false), ...idempotency } });
      return (await readJsonAnswer(res, openAIBatchSchema)).data;
    });
    return { id: batch.id, context: {} };
  }

  async poll(handle: NativeBatchHandle, target: ChatTarget, signal?: AbortSignal): Promise<NativeBatchState> {
    return convertOpenAIBatchState(await this.batch(handle, target, signal));
  }

  async cancel(handle: NativeBatchHandle, target: ChatTarget, signal?: AbortSignal): Promise<NativeBatchState> {
    try {
      return await callUpstream(target, signal, async (deadline) => {
        const res = await this.call(target, deadline, 'POST', `/batches/${encodeURIComponent(handle.id)}/cancel`, { body: '{}', headers: jsonRequestHeaders(target, false) });
        return convertOpenAIBatchState((await readJsonAnswer(res, openAIBatchSchema)).data);
      });
    } catch (err) {
      // A batch that ended meanwhile cannot be cancelled: the upstream refuses, and its end state is the answer.
      if (isRetryableUpstreamError(err)) throw err;
      const state = await this.poll(handle, target, signal);
      if (isTerminalNativeBatchStatus(state.status)) return state;
      throw err;
    }
  }

  async *results(handle: NativeBatchHandle, target: ChatTarget, signal?: AbortSignal): AsyncGenerator<NativeBatchLineResult> {
    const batch = await this.batch(handle, target, signal);
    for (const fileId of [batch.output_file_id, batch.error_file_id]) {
      if (!fileId) continue;
      const { res, deadline } = await openUpstreamStream(target, signal, (d) => this.call(target, d, 'GET', `/files/${encodeURIComponent(fileId)}/content`, { headers: { accept: 'application/octet-stream' } }));
      for await (const line of upstreamLines(res, deadline)) yield convertOpenAIBatchResultLine(line);
    }
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  private batch(handle: NativeBatchHandle, target: ChatTarget, signal?: AbortSignal): Promise<OpenAIBatch> {
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.call(target, deadline, 'GET', `/batches/${encodeURIComponent(handle.id)}`, { headers: jsonRequestHeaders(target, false) });
      return (await readJsonAnswer(res, openAIBatchSchema)).data;
    });
  }

  private call(
    target: ChatTarget,
    deadline: Deadline,
    method: 'GET' | 'POST',
    endpoint: string,
    request: { body?: string | Readable; headers: Record<string, string> },
  ): Promise<UpstreamAnswer> {
    return requestUpstream(this.pools, target, {
      method,
      endpoint,
      headers: { ...extraHeaders(target), ...request.headers, ...OPENAI_DIALECT.authHeaders(target) },
      body: request.body,
      deadline,
      mapError: BATCH_ERRORS,
    });
  }
}

/** The target's extra headers, names lower-cased (jsonRequestHeaders adds them for JSON calls). */
function extraHeaders(target: ChatTarget): Record<string, string> {
  return Object.fromEntries(Object.entries(target.extraHeaders ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
}
