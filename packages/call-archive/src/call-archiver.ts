import type { OutgoingMessage, TypedPublisher } from '@gw/bus';
import type { Identity, Logger } from '@gw/platform';
import { TOPICS, type CallArchived, type TopicMessages } from '@gw/proto';
import { archivableCopy } from './archivable';

export type ArchiveMode = 'full' | 'metadata' | 'off';
/** The usage events' api types: every kind of call is archived. */
export type ArchivedApiType = 'chat' | 'responses' | 'messages' | 'image' | 'video' | 'transcription' | 'speech' | 'batch';

/** The bus message budget an archive publish stays under (Kafka's default limit is 1 MiB per batch). */
const PUBLISH_BUDGET_BYTES = 768 * 1024;
/** Room for a record's metadata and JSON quoting beside its two bodies. */
const RECORD_OVERHEAD_BYTES = 4 * 1024;

export interface ArchivedCall {
  requestId: string;
  identity: Pick<Identity, 'accountId' | 'keyHash'>;
  apiType: ArchivedApiType;
  model: string;
  providerResponseId: string;
  streamed: boolean;
  /** The request body as validated (never headers); media in it is described, not kept (inline-media.ts). */
  request: unknown;
  /** The answer; a stream's reassembled into one object; media bytes described, not kept. */
  response: unknown;
  startedAtMs: number;
  traceId: string;
  /** No usage event is published for this call (a failed video): the ledger cannot resolve its provider id. */
  unbilled?: boolean;
}

export interface CallArchiverOptions {
  mode: ArchiveMode;
  maxBodyBytes: number;
}

/** JSON text cut to `maxBytes` on a character boundary; `truncated` says it was cut. */
export function boundedJson(value: unknown, maxBytes: number): { text: string; truncated: boolean } {
  const text = JSON.stringify(value) ?? 'null';
  if (Buffer.byteLength(text) <= maxBytes) return { text, truncated: false };
  // A multi-byte character cut in half decodes to U+FFFD: dropped, so the text stays whole characters.
  return { text: Buffer.from(text).subarray(0, maxBytes).toString('utf8').replace(/\uFFFD+$/, ''), truncated: true };
}

/**
 * Publishes each call's archive record on `gateway.archive.v1` for billing to keep. Off the response path:
 * the record is built on a later tick (after the answer was written) and leaves through a batching publisher
 * whose batches stay under the bus's message budget. A failure to archive is logged; it never fails a call.
 */
export class CallArchiver {
  constructor(private readonly publisher: TypedPublisher<TopicMessages> | null, private readonly opts: CallArchiverOptions, private readonly logger: Logger) {}

  /** An archiver that keeps nothing (`ARCHIVE_MODE=off`). */
  static off(logger: Logger): CallArchiver {
    return new CallArchiver(null, { mode: 'off', maxBodyBytes: 0 }, logger);
  }

  /**
   * How the archive's batching publisher cuts publishes: by bytes, so a publish of the largest records stays
   * under the bus's budget while small records still travel many to a publish. Each body is JSON text inside
   * the record's JSON, where escaping can multiply its size: a record counts at 4x its bodies.
   */
  static readonly publishOptions = {
    maxBatchBytes: PUBLISH_BUDGET_BYTES,
    sizeOf: (message: OutgoingMessage): number => {
      const record = message.value as Partial<CallArchived>;
      return 4 * ((record.request_json?.length ?? 0) + (record.response_json?.length ?? 0)) + RECORD_OVERHEAD_BYTES;
    },
  };

  get mode(): ArchiveMode {
    return this.opts.mode;
  }

  record(call: ArchivedCall): void {
    if (this.opts.mode === 'off' || !this.publisher) return;
    const publisher = this.publisher;
    setImmediate(() => {
      try {
        publisher.enqueue(TOPICS.archive, { key: call.requestId, value: this.toRecord(call) });
      } catch (err) {
        this.logger.error({ err: (err as Error).message, requestId: call.requestId }, 'call not archived');
      }
    });
  }

  private toRecord(call: ArchivedCall): CallArchived {
    const full = this.opts.mode === 'full';
    const kept = (body: unknown) => boundedJson(archivableCopy(body), this.opts.maxBodyBytes);
    const request = full ? kept(call.request) : { text: '', truncated: false };
    const response = full ? kept(call.response) : { text: '', truncated: false };
    return {
      request_id: call.requestId,
      account_id: call.identity.accountId,
      key_hash: call.identity.keyHash,
      api_type: call.apiType,
      model: call.model,
      provider_response_id: call.providerResponseId,
      streamed: call.streamed,
      mode: this.opts.mode,
      request_json: request.text,
      response_json: response.text,
      request_truncated: request.truncated,
      response_truncated: response.truncated,
      created_at_ms: call.startedAtMs,
      trace_id: call.traceId,
      unbilled: call.unbilled === true,
    };
  }
}
