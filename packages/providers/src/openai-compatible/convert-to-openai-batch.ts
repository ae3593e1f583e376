import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { NativeBatchLine } from '@gw/provider-spec';
import { convertToOpenAIChat } from './convert-to-openai-chat';
import { checkedLines, convertLine } from '../convert/native-batch-lines';

/** The endpoint every line of a chat batch names, as the batch itself does. */
export const OPENAI_BATCH_ENDPOINT = '/v1/chat/completions';

/** One input line: the chat body the chat adapter would send, for the provider model. */
export function convertToOpenAIBatchLine(line: NativeBatchLine, providerModel: string): string {
  const body = convertLine(line, () => convertToOpenAIChat(line.request, providerModel, false));
  return `${JSON.stringify({ custom_id: line.custom_id, method: 'POST', url: OPENAI_BATCH_ENDPOINT, body })}\n`;
}

export interface MultipartUpload {
  contentType: string;
  body: Readable;
  /** Why the upload was cut short by the gateway itself (a line that could not be converted); undefined otherwise. */
  failure(): Error | undefined;
}

/**
 * `POST /files` as multipart/form-data (`purpose=batch` and the JSONL file), written line by line as the
 * upload goes, so the file is never held whole. A line that cannot be converted ends the upload with its
 * error: the upstream never sees a complete file, so no batch is made of it.
 */
export function batchFileUpload(lines: AsyncIterable<NativeBatchLine> | Iterable<NativeBatchLine>, providerModel: string): MultipartUpload {
  const boundary = `gw-batch-${randomUUID()}`;
  let failure: Error | undefined;
  async function* parts(): AsyncGenerator<Buffer> {
    try {
      yield* linesOf();
    } catch (err) {
      failure = err as Error;
      throw err;
    }
  }
  async function* linesOf(): AsyncGenerator<Buffer> {
    yield Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="batch.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`,
    );
    for await (const line of checkedLines(lines)) yield Buffer.from(convertToOpenAIBatchLine(line, providerModel));
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Readable.from(parts(), { objectMode: false }), failure: () => failure };
}
