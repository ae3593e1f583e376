import { Readable } from 'node:stream';
import { text as readText } from 'node:stream/consumers';
import type { BlobStore } from '@gw/blobs';
import { NotFoundError, type Logger } from '@gw/platform';
import type { BusMessage } from '@gw/bus';
import type { Collection, Doc, Store } from '@gw/store';
import { callArchivedSchema, type CallArchivedRecord } from './archive-record';

/** One archived call's metadata; its bodies, when kept, are the blob `blob_key`. `_id` is the request id. */
export interface ArchiveDoc extends Doc {
  account_id: string;
  key_hash: string;
  api_type: string;
  model: string;
  provider_response_id: string;
  streamed: boolean;
  mode: 'full' | 'metadata';
  request_truncated: boolean;
  response_truncated: boolean;
  blob_key: string | null;
  created_at_ms: number;
  archived_at_ms: number;
  trace_id: string;
}

/** The bodies blob: the JSON texts as the publisher bounded them. */
interface ArchiveBodies {
  request_json: string;
  response_json: string;
}

export interface ArchivedCallView {
  request_id: string;
  id: string | null;
  api_type: string;
  model: string;
  /** `metadata`: the bodies were not kept (ARCHIVE_MODE=metadata where the call was made). */
  mode: 'full' | 'metadata';
  request: unknown;
  response: unknown;
  streamed: boolean;
  truncated: boolean;
  created_at: string;
  trace_id: string | null;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Blob writes one batch runs at once. */
const PUT_CONCURRENCY = 8;
/** Archives one sweep removes at most; the next sweep goes on. */
const SWEEP_PAGE = 500;

export function archiveCollection(store: Store): Collection<ArchiveDoc> {
  return store.collection<ArchiveDoc>('call_archive');
}

export async function ensureArchiveIndexes(archive: Collection<ArchiveDoc>): Promise<void> {
  await archive.ensureIndex({ fields: { provider_response_id: 1 } });
  await archive.ensureIndex({ fields: { created_at_ms: 1 } });
}

/** Grouped by the call's day, so an operator can see (and back up) the archive by date. */
function blobKeyOf(r: CallArchivedRecord): string {
  return `archive/${new Date(r.created_at_ms).toISOString().slice(0, 10)}/${r.request_id}.json`;
}

async function inBatches<T>(items: T[], size: number, run: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

/** A body as the lookup shows it: the JSON it was, or the text when it was cut (or is not JSON). */
function bodyOf(json: string, truncated: boolean): unknown {
  if (json === '') return null;
  if (truncated) return json;
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

/**
 * The call archive, owned by billing: records from `gateway.archive.v1` land as a blob (the bodies) and a
 * metadata document, in that order, so a document never names a missing blob. Both writes are idempotent
 * (same key, same id), so a redelivered record changes nothing. Kept for `retentionDays`, then swept.
 */
export class CallArchive {
  private readonly docs: Collection<ArchiveDoc>;

  constructor(store: Store, private readonly blobs: BlobStore, private readonly opts: { retentionDays: number }, private readonly logger: Logger,
    private readonly now: () => Date = () => new Date()) {
    this.docs = archiveCollection(store);
  }

  async ensureIndexes(): Promise<void> {
    await ensureArchiveIndexes(this.docs);
  }

  /** The consumer's batch step. */
  async handleBatch(messages: BusMessage<unknown>[]): Promise<void> {
    const records: CallArchivedRecord[] = [];
    for (const m of messages) {
      const parsed = callArchivedSchema.safeParse(m.value);
      if (parsed.success) records.push(parsed.data);
      else this.logger.error({ topic: m.topic, partition: m.partition, offset: m.offset, problem: parsed.error.issues[0]?.message }, 'malformed archive record skipped');
    }
    const cutoff = this.cutoffMs();
    const kept = records.filter((r) => r.created_at_ms >= cutoff);
    if (kept.length === 0) return;
    const nowMs = this.now().getTime();
    await inBatches(kept.filter((r) => r.mode === 'full'), PUT_CONCURRENCY, async (r) => {
      const bodies: ArchiveBodies = { request_json: r.request_json, response_json: r.response_json };
      // A request id is archived under one key, once (a redelivery writes the same bodies again).
      await this.blobs.put(blobKeyOf(r), Readable.from([Buffer.from(JSON.stringify(bodies))]), { keyIsNew: true });
    });
    await this.docs.insertMany(kept.map((r) => ({
      _id: r.request_id, account_id: r.account_id, key_hash: r.key_hash, api_type: r.api_type, model: r.model,
      provider_response_id: r.provider_response_id, streamed: r.streamed, mode: r.mode,
      request_truncated: r.request_truncated, response_truncated: r.response_truncated,
      blob_key: r.mode === 'full' ? blobKeyOf(r) : null, created_at_ms: r.created_at_ms, archived_at_ms: nowMs, trace_id: r.trace_id,
    })), { ignoreDuplicates: true });
  }

  /**
   * The caller's own archived call, by request id or provider id. Unknown, another account's, never archived
   * (ARCHIVE_MODE=off) and past retention all answer the same 404.
   */
  async lookup(accountId: string, id: string): Promise<ArchivedCallView> {
    const doc = (await this.docs.findOne({ _id: id, account_id: accountId })) ?? (await this.docs.findOne({ provider_response_id: id, account_id: accountId }));
    const notFound = () => new NotFoundError(`No archived call for ${id}`, 'request_id', 'archive_not_found');
    if (!doc || doc.created_at_ms < this.cutoffMs()) throw notFound();
    let bodies: ArchiveBodies = { request_json: '', response_json: '' };
    if (doc.blob_key) {
      if (!(await this.blobs.stat(doc.blob_key))) throw notFound();
      try {
        bodies = JSON.parse(await readText(await this.blobs.get(doc.blob_key))) as ArchiveBodies;
      } catch (err) {
        this.logger.error({ err: (err as Error).message, requestId: doc._id }, 'archive blob unreadable');
        throw notFound();
      }
    }
    return {
      request_id: doc._id,
      id: doc.provider_response_id || null,
      api_type: doc.api_type,
      model: doc.model,
      mode: doc.mode,
      request: bodyOf(bodies.request_json, doc.request_truncated),
      response: bodyOf(bodies.response_json, doc.response_truncated),
      streamed: doc.streamed,
      truncated: doc.request_truncated || doc.response_truncated,
      created_at: new Date(doc.created_at_ms).toISOString(),
      trace_id: doc.trace_id || null,
    };
  }

  /** Removes archives past retention, bodies first; returns how many went. */
  async sweep(): Promise<number> {
    const expired = await this.docs.find({ created_at_ms: { $lt: this.cutoffMs() } }, { sort: { created_at_ms: 1 }, limit: SWEEP_PAGE });
    await inBatches(expired.filter((d) => d.blob_key), PUT_CONCURRENCY, async (d) => { await this.blobs.delete(d.blob_key!); });
    if (expired.length > 0) await this.docs.deleteMany({ _id: { $in: expired.map((d) => d._id) } });
    return expired.length;
  }

  private cutoffMs(): number {
    return this.now().getTime() - this.opts.retentionDays * DAY_MS;
  }
}
