import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { text as readText } from 'node:stream/consumers';
import type { BlobStore } from '@gw/blobs';
import { NotFoundError, type Logger } from '@gw/platform';
import type { BusMessage } from '@gw/bus';
import type { Collection, Doc, Store } from '@gw/store';
import { ledgerCollection, type LedgerEntry } from '../ledger';
import { callArchivedSchema, type CallArchivedRecord } from './archive-record';
import { markOlderUnbilledRecords } from './archive-upgrade';

/**
 * One archived call's metadata; `_id` is the request id. Its bodies, when kept, are bytes `blob_start` to
 * `blob_start + blob_bytes` of the blob `blob_key`: a segment holding the bodies of one batch's calls of one
 * day, a JSON line each. Without `blob_start`, the whole blob (archives written before segments).
 *
 * A provider id is found through the ledger, which indexes it for the billing lookup anyway (each index on a
 * random key costs every archived call a page write); only a call that is never billed keeps its provider id
 * in `unbilled_provider_id`, under a sparse index of the archive's own.
 */
export interface ArchiveDoc extends Doc {
  account_id: string;
  key_hash: string;
  api_type: string;
  model: string;
  provider_response_id: string;
  /** The provider id of a call no usage event bills (`unbilled` on its record); absent otherwise. */
  unbilled_provider_id?: string;
  streamed: boolean;
  mode: 'full' | 'metadata';
  request_truncated: boolean;
  response_truncated: boolean;
  blob_key: string | null;
  blob_start?: number;
  blob_bytes?: number;
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
/**
 * What one batch of the archive consumer takes: most of its cost is per batch (a read, a segment file, one
 * insert of the documents), so up to 256 records; and at most 4 MiB of them, since one record can carry bodies
 * of up to the archive's body limit each (a batch of the largest is then a few records, not 256).
 */
export const ARCHIVE_BATCH = { maxBatch: 256, maxBatchBytes: 4 * 1024 * 1024 } as const;
/** Blob writes or deletes one batch or sweep runs at once. */
const BLOB_CONCURRENCY = 8;
/** Archives one sweep removes at most; the next sweep goes on. */
const SWEEP_PAGE = 500;

export function archiveCollection(store: Store): Collection<ArchiveDoc> {
  return store.collection<ArchiveDoc>('call_archive');
}

export async function ensureArchiveIndexes(archive: Collection<ArchiveDoc>): Promise<void> {
  // Until 2026-11-29 every provider id was indexed here too; the ledger's index serves billed calls.
  await archive.dropIndex({ fields: { provider_response_id: 1 } });
  await archive.ensureIndex({ fields: { unbilled_provider_id: 1 }, sparse: true });
  await archive.ensureIndex({ fields: { created_at_ms: 1 } });
  // The sweep asks which records still name a segment.
  await archive.ensureIndex({ fields: { blob_key: 1 } });
}

const dayOf = (r: CallArchivedRecord) => new Date(r.created_at_ms).toISOString().slice(0, 10);

/**
 * One blob per batch and day (one file write for many calls instead of one each), grouped by the calls' day so
 * an operator can see (and back up) the archive by date. Named by its calls, so the same batch delivered again
 * writes the same segment.
 */
function segmentKeyOf(day: string, records: CallArchivedRecord[]): string {
  const hash = createHash('sha256');
  for (const r of records) hash.update(`${r.request_id}\n`);
  return `archive/${day}/${hash.digest('hex').slice(0, 32)}.jsonl`;
}

interface BodiesLocation {
  blob_key: string;
  blob_start: number;
  blob_bytes: number;
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
  private readonly ledger: Collection<LedgerEntry>;

  constructor(private readonly store: Store, private readonly blobs: BlobStore, private readonly opts: { retentionDays: number }, private readonly logger: Logger,
    private readonly now: () => Date = () => new Date()) {
    this.docs = archiveCollection(store);
    this.ledger = ledgerCollection(store);
  }

  /** The indexes, and (once per store) the upgrade of records written before the ledger resolved provider ids. */
  async ensureIndexes(): Promise<void> {
    await ensureArchiveIndexes(this.docs);
    await markOlderUnbilledRecords(this.store, this.docs, this.ledger, this.logger, this.now().getTime());
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
    const located = await this.writeSegments(kept.filter((r) => r.mode === 'full'));
    await this.docs.insertMany(kept.map((r) => ({
      _id: r.request_id, account_id: r.account_id, key_hash: r.key_hash, api_type: r.api_type, model: r.model,
      provider_response_id: r.provider_response_id, ...(r.unbilled && r.provider_response_id ? { unbilled_provider_id: r.provider_response_id } : {}),
      streamed: r.streamed, mode: r.mode,
      request_truncated: r.request_truncated, response_truncated: r.response_truncated,
      blob_key: null, ...located.get(r.request_id), created_at_ms: r.created_at_ms, archived_at_ms: nowMs, trace_id: r.trace_id,
    })), { ignoreDuplicates: true });
  }

  /**
   * Writes the bodies of the records not archived yet (a redelivered record's doc names its segment already),
   * one segment per day, before any doc names it. Returns where each record's bodies are.
   */
  private async writeSegments(full: CallArchivedRecord[]): Promise<Map<string, BodiesLocation>> {
    const located = new Map<string, BodiesLocation>();
    if (full.length === 0) return located;
    const seen = new Set((await this.docs.find({ _id: { $in: full.map((r) => r.request_id) } })).map((d) => d._id));
    const byDay = new Map<string, CallArchivedRecord[]>();
    for (const r of full) {
      if (seen.has(r.request_id)) continue;
      seen.add(r.request_id);
      const day = dayOf(r);
      const records = byDay.get(day);
      if (records) records.push(r);
      else byDay.set(day, [r]);
    }
    await inBatches([...byDay], BLOB_CONCURRENCY, async ([day, records]) => {
      const key = segmentKeyOf(day, records);
      const lines: Buffer[] = [];
      let offset = 0;
      for (const r of records) {
        const bodies: ArchiveBodies = { request_json: r.request_json, response_json: r.response_json };
        const line = Buffer.from(`${JSON.stringify(bodies)}\n`);
        located.set(r.request_id, { blob_key: key, blob_start: offset, blob_bytes: line.length - 1 });
        lines.push(line);
        offset += line.length;
      }
      await this.blobs.put(key, Readable.from([Buffer.concat(lines)]), { keyIsNew: true });
    });
    return located;
  }

  /**
   * The caller's own archived call, by request id or provider id. Unknown, another account's, never archived
   * (ARCHIVE_MODE=off) and past retention all answer the same 404.
   */
  async lookup(accountId: string, id: string): Promise<ArchivedCallView> {
    const doc = (await this.docs.findOne({ _id: id, account_id: accountId })) ?? (await this.byProviderId(accountId, id));
    const notFound = () => new NotFoundError(`No archived call for ${id}`, 'request_id', 'archive_not_found');
    if (!doc || doc.created_at_ms < this.cutoffMs()) throw notFound();
    let bodies: ArchiveBodies = { request_json: '', response_json: '' };
    if (doc.blob_key) {
      if (!(await this.blobs.stat(doc.blob_key))) throw notFound();
      const range = doc.blob_start === undefined ? {} : { start: doc.blob_start, end: doc.blob_start + doc.blob_bytes! - 1 };
      try {
        bodies = JSON.parse(await readText(await this.blobs.get(doc.blob_key, range))) as ArchiveBodies;
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

  /** By provider id: a billed call's through its ledger entry (in any state), else an unbilled call's. */
  private async byProviderId(accountId: string, id: string): Promise<ArchiveDoc | null> {
    const entry = await this.ledger.findOne({ provider_response_id: id, account_id: accountId });
    const billed = entry ? await this.docs.findOne({ _id: entry._id, account_id: accountId }) : null;
    return billed ?? (await this.docs.findOne({ unbilled_provider_id: id, account_id: accountId }));
  }

  /** Removes archives past retention, bodies first; returns how many went. */
  async sweep(): Promise<number> {
    const expired = await this.docs.find({ created_at_ms: { $lt: this.cutoffMs() } }, { sort: { created_at_ms: 1 }, limit: SWEEP_PAGE });
    const expiredIds = new Set(expired.map((d) => d._id));
    const segments = [...new Set(expired.flatMap((d) => (d.blob_key ? [d.blob_key] : [])))];
    await inBatches(segments, BLOB_CONCURRENCY, async (key) => {
      // A segment goes with the last record naming it (its calls may fall on both sides of the cutoff).
      const naming = await this.docs.find({ blob_key: key });
      if (naming.every((d) => expiredIds.has(d._id))) await this.blobs.delete(key);
    });
    if (expired.length > 0) await this.docs.deleteMany({ _id: { $in: expired.map((d) => d._id) } });
    return expired.length;
  }

  private cutoffMs(): number {
    return this.now().getTime() - this.opts.retentionDays * DAY_MS;
  }
}
