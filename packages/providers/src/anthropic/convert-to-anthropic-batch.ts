import { Readable } from 'node:stream';
import type { NativeBatchLine } from '@gw/provider-spec';
import { checkedLines, convertLine } from '../convert/native-batch-lines';
import type { AnthropicRequest } from './convert-to-anthropic-request';
import { convertToAnthropicRequest } from './convert-to-anthropic-request';

/** How to read one line's answer back, kept only for lines that differ from the plain reading. */
export type AnthropicReadHint = Pick<AnthropicRequest, 'jsonToolName' | 'includeReasoning'>;

export interface MessageBatchUpload {
  /** `{"requests": [...]}`, written line by line as the upload goes, so the lines are never held whole. */
  body: Readable;
  /** Complete once the body has been read to its end. */
  readHints(): Record<string, AnthropicReadHint>;
  /** Why the upload was cut short by the gateway itself (a line that could not be converted); undefined otherwise. */
  failure(): Error | undefined;
}

/**
 * `POST /messages/batches`: each line's params are the body the chat adapter sends for the provider model.
 * A line that cannot be converted ends the upload with its error: the upstream never gets a complete body,
 * so no batch is made of it.
 */
export function messageBatchUpload(lines: AsyncIterable<NativeBatchLine> | Iterable<NativeBatchLine>, providerModel: string): MessageBatchUpload {
  const hints: Record<string, AnthropicReadHint> = {};
  let failure: Error | undefined;
  async function* parts(): AsyncGenerator<Buffer> {
    yield Buffer.from('{"requests":[');
    let first = true;
    for await (const line of checkedLines(lines)) {
      const request = convertLine(line, () => convertToAnthropicRequest(line.request, providerModel, false));
      if (request.jsonToolName !== undefined || request.includeReasoning) {
        hints[line.custom_id] = { jsonToolName: request.jsonToolName, includeReasoning: request.includeReasoning };
      }
      yield Buffer.from(`${first ? '' : ','}${JSON.stringify({ custom_id: line.custom_id, params: request.body })}`);
      first = false;
    }
    yield Buffer.from(']}');
  }
  async function* guarded(): AsyncGenerator<Buffer> {
    try {
      yield* parts();
    } catch (err) {
      failure = err as Error;
      throw err;
    }
  }
  return { body: Readable.from(guarded(), { objectMode: false }), readHints: () => hints, failure: () => failure };
}
