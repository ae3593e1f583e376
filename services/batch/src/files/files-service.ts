import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { BlobNotFoundError, type BlobStore } from '@gw/blobs';
import { ConflictError, InputError, NotFoundError, newId } from '@gw/platform';
import type { Collection, Filter } from '@gw/store';
import { listPage, type ListPage, type PageQuery } from '../list-page';
import { blobKeyOf, toFileObject, type FileDoc, type FileObject, type FilePurpose } from './file-records';
import { receiveUpload, type UploadLimits } from './multipart-upload';

export interface FilesOptions extends UploadLimits {
  expiresAfterMs: number;
}

/** Whether a file is still needed by a batch that has not finished (then it may not be deleted). */
export type FileInUse = (accountId: string, fileId: string) => Promise<boolean>;

// Another account's file is indistinguishable from a missing one.
/** The upload form's text fields (OpenAI's `expires_after` is not one: files expire after FILE_EXPIRES_AFTER_S). */
const UPLOAD_TEXT_FIELDS: ReadonlySet<string> = new Set(['purpose']);
const notFound = (fileId: string) => new NotFoundError(`No such file: ${fileId}`, 'file_id', 'file_not_found');

/** Files of an account: uploads streamed to the blob port, their records in the store. */
export class FilesService {
  constructor(
    private readonly files: Collection<FileDoc>,
    private readonly blobs: BlobStore,
    private readonly opts: FilesOptions,
    private readonly inUse: FileInUse,
    private readonly now: () => number = Date.now,
  ) {}

  async upload(accountId: string, req: IncomingMessage): Promise<FileObject> {
    const id = newId('file-');
    const key = blobKeyOf(id);
    const upload = await receiveUpload(req, this.blobs, key, this.opts, UPLOAD_TEXT_FIELDS);
    const purpose = upload.fields.purpose;
    if (purpose !== 'batch') {
      await this.blobs.delete(key);
      throw new InputError(purpose === undefined ? 'purpose is required: "batch"' : `purpose must be "batch", not "${purpose}"`, 'purpose');
    }
    if (upload.lines === 0) {
      await this.blobs.delete(key);
      throw new InputError('The file is empty', 'file', 'empty_file');
    }
    return toFileObject(await this.record({ id, accountId, filename: upload.filename, purpose, bytes: upload.blob.bytes, lines: upload.lines }));
  }

  /** Stores the bytes of a file the gateway made (a batch's output) and its record, under a caller-chosen id. */
  async save(input: { id: string; accountId: string; filename: string; purpose: FilePurpose; content: Readable; lines: number }): Promise<FileDoc> {
    const existing = await this.files.findOne({ _id: input.id });
    if (existing) return existing;
    const blob = await this.blobs.put(blobKeyOf(input.id), input.content);
    return this.record({ ...input, bytes: blob.bytes });
  }

  private async record(input: { id: string; accountId: string; filename: string; purpose: FilePurpose; bytes: number; lines: number }): Promise<FileDoc> {
    const created = this.now();
    const doc: FileDoc = {
      _id: input.id, account_id: input.accountId, filename: input.filename, purpose: input.purpose, bytes: input.bytes,
      lines: input.lines, blob_key: blobKeyOf(input.id), created_at_ms: created, expires_at_ms: created + this.opts.expiresAfterMs,
    };
    await this.files.insertOne(doc);
    return doc;
  }

  async list(accountId: string, query: PageQuery & { purpose?: string }): Promise<ListPage<FileObject>> {
    const scope: Filter = { account_id: accountId };
    if (query.purpose !== undefined) scope.purpose = query.purpose;
    return listPage(this.files, scope, query, toFileObject);
  }

  async get(accountId: string, fileId: string): Promise<FileDoc> {
    const doc = await this.files.findOne({ _id: fileId, account_id: accountId });
    if (!doc) throw notFound(fileId);
    return doc;
  }

  async content(accountId: string, fileId: string): Promise<{ doc: FileDoc; body: Readable }> {
    const doc = await this.get(accountId, fileId);
    try {
      return { doc, body: await this.blobs.get(doc.blob_key) };
    } catch (err) {
      // Deleted (or expired) between reading its record and its bytes: gone, as a moment later.
      if (err instanceof BlobNotFoundError) throw notFound(fileId);
      throw err;
    }
  }

  /**
   * Removes files past their `expires_at` (the record first, so a reader never finds a record without bytes),
   * except the input of a batch that has not finished. Returns how many went.
   */
  async deleteExpired(limit = 100): Promise<number> {
    let removed = 0;
    for (const doc of await this.files.find({ expires_at_ms: { $lt: this.now() } }, { limit })) {
      if (await this.inUse(doc.account_id, doc._id)) continue;
      if (await this.files.deleteOne({ _id: doc._id })) removed++;
      await this.blobs.delete(doc.blob_key);
    }
    return removed;
  }

  async delete(accountId: string, fileId: string): Promise<{ id: string; object: 'file'; deleted: true }> {
    const doc = await this.get(accountId, fileId);
    if (await this.inUse(accountId, fileId)) throw new ConflictError(`File ${fileId} is the input of a batch that has not finished`, 'file_in_use');
    await this.files.deleteOne({ _id: doc._id, account_id: accountId });
    await this.blobs.delete(doc.blob_key);
    return { id: doc._id, object: 'file', deleted: true };
  }
}
