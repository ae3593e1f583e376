import mongoose, { type mongo } from 'mongoose';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ByteLimit } from '../byte-limit';
import { BlobNotFoundError, checkBlobKey, checkBlobPrefix, type BlobInfo, type BlobStore, type GetOptions, type PutOptions } from '../port';

export interface GridFsBlobStoreConfig {
  /** Connection string; the database is the one it names. */
  url: string;
  /** GridFS bucket (collections `<bucket>.files` and `<bucket>.chunks`). */
  bucket?: string;
}

type FileDoc = mongo.GridFSFile;

/** An upload begun and not yet finished: its files id, so chunks no files document will ever name can be found. */
interface UploadIntent {
  _id: mongo.ObjectId;
  key: string;
}

/**
 * An unfinished upload whose chunks have not grown for this long belongs to no put in progress (a process killed
 * mid-upload): its chunks are removed when a store opens.
 */
const STALE_UPLOAD_MS = 60 * 60_000;

const info = (f: FileDoc): BlobInfo => ({ key: f.filename, bytes: f.length, createdAtMs: f.uploadDate.getTime() });
const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The driver finds the file's document only at its first read, and ends quietly where the chunks stop, so a blob
 * deleted after `revisions` found it would fail, or cut short, a stream its reader has already begun to serve.
 * Reading the first chunk before resolving turns that into `BlobNotFoundError` (a blob of one chunk, 255 KiB,
 * is then read whole whatever happens to it next), and a stream that ends short of `bytes` fails.
 */
async function firstChunkRead(key: string, download: Readable, bytes: number): Promise<Readable> {
  const chunks = download[Symbol.asyncIterator]();
  let first: IteratorResult<Buffer>;
  try {
    first = await chunks.next();
  } catch (err) {
    if (err instanceof mongoose.mongo.MongoRuntimeError && /^(FileNotFound|ChunkIsMissing):/.test(err.message)) throw new BlobNotFoundError(key);
    throw err;
  }
  if (first.done && bytes > 0) throw new BlobNotFoundError(key);
  let received = 0;
  const deliver = (next: IteratorResult<Buffer>) => {
    if (!next.done) {
      received += next.value.byteLength;
      body.push(next.value);
    } else if (received < bytes) {
      body.destroy(new Error(`Blob '${key}' ended after ${received} of ${bytes} bytes: deleted while it was read`));
    } else {
      body.push(null);
    }
  };
  const body = new Readable({
    read() {
      chunks.next().then(deliver, (err: Error) => body.destroy(err));
    },
    // Ends the download too (and its cursor on the server) when the reader stops early.
    destroy(err, done) {
      chunks.return!().then(() => done(err), () => done(err));
    },
  });
  deliver(first);
  return body;
}

/**
 * Blobs in MongoDB GridFS, the key as the file name. GridFS writes a file's document only after its last
 * chunk, so readers never see a partial blob; a put then removes the key's older revisions, and readers
 * always take the newest revision meanwhile. A put records its upload in `<bucket>.uploads` until it ends, so
 * the chunks of an upload a killed process cut short are found without reading every chunk, and removed when a
 * store next opens.
 */
class GridFsBlobStore implements BlobStore {
  readonly engine = 'gridfs';
  private readonly connection = mongoose.createConnection();
  private opening: Promise<mongo.GridFSBucket> | undefined;
  /** The removal of uploads earlier processes left unfinished; `close` waits for it. */
  private staleUploadsRemoved: Promise<void> | undefined;

  constructor(private readonly cfg: GridFsBlobStoreConfig) {
    this.connection.on('error', () => undefined);
  }

  private collection<T extends mongo.Document>(suffix: 'files' | 'chunks' | 'uploads'): mongo.Collection<T> {
    return this.connection.db!.collection<T>(`${this.cfg.bucket ?? 'blobs'}.${suffix}`);
  }

  /**
   * Chunks of each unfinished upload begun over `STALE_UPLOAD_MS` ago whose newest chunk is as old (a chunk's id
   * is made when it is written): no files document will name them. An upload whose files document exists
   * finished, and only its record is dropped.
   */
  private async removeStaleUploads(): Promise<void> {
    const cutoffMs = Date.now() - STALE_UPLOAD_MS;
    const cutoff = mongoose.mongo.ObjectId.createFromTime(Math.floor(cutoffMs / 1000));
    const uploads = this.collection<UploadIntent>('uploads');
    const chunks = this.collection<{ files_id: mongo.ObjectId; n: number }>('chunks');
    for (const upload of await uploads.find({ _id: { $lt: cutoff } }).limit(10_000).toArray()) {
      if (!(await this.collection('files').findOne({ _id: upload._id }, { projection: { _id: 1 } }))) {
        const [newest] = await chunks.find({ files_id: upload._id }, { projection: { _id: 1 } }).sort({ n: -1 }).limit(1).toArray();
        if (newest && newest._id.getTimestamp().getTime() >= cutoffMs) continue;
        await chunks.deleteMany({ files_id: upload._id });
      }
      await uploads.deleteOne({ _id: upload._id });
    }
  }

  private bucket(): Promise<mongo.GridFSBucket> {
    if (!this.opening) {
      const opening = this.connection.openUri(this.cfg.url, { autoIndex: false, autoCreate: false }).then((conn) => {
        if (!conn.db) throw new Error('MongoDB connection opened without a database');
        const bucket = new mongoose.mongo.GridFSBucket(conn.db, { bucketName: this.cfg.bucket ?? 'blobs' });
        this.staleUploadsRemoved ??= this.removeStaleUploads().catch(() => undefined);
        return bucket;
      });
      opening.catch(() => {
        if (this.opening === opening) this.opening = undefined;
      });
      this.opening = opening;
    }
    return this.opening;
  }

  private async revisions(key: string): Promise<FileDoc[]> {
    return (await this.bucket()).find({ filename: checkBlobKey(key) }, { sort: { uploadDate: -1, _id: -1 } }).toArray();
  }

  async put(key: string, source: Readable, opts: PutOptions = {}): Promise<BlobInfo> {
    const bucket = await this.bucket();
    const upload = bucket.openUploadStream(checkBlobKey(key));
    const uploads = this.collection<UploadIntent>('uploads');
    await uploads.insertOne({ _id: upload.id, key });
    try {
      await pipeline(source, new ByteLimit(opts.maxBytes ?? Number.MAX_SAFE_INTEGER), upload);
    } catch (err) {
      await upload.abort().catch(() => undefined);
      await uploads.deleteOne({ _id: upload.id }).catch(() => undefined);
      throw err;
    }
    // Left behind (a failure here), the record is dropped by a later sweep: the files document exists.
    await uploads.deleteOne({ _id: upload.id }).catch(() => undefined);
    if (!opts.keyIsNew) {
      for (const older of await this.revisions(key)) {
        if (!older._id.equals(upload.id)) await bucket.delete(older._id).catch(() => undefined);
      }
    }
    // The files document the upload wrote, as it wrote it: no lookup by name (a full scan where the server
    // has no filename index).
    const written = upload.gridFSFile;
    if (!written) throw new Error(`Blob '${key}' has no files document after its upload finished`);
    return info(written);
  }

  async get(key: string, opts: GetOptions = {}): Promise<Readable> {
    const [latest] = await this.revisions(key);
    if (!latest) throw new BlobNotFoundError(key);
    // The driver wants both ends once a range is asked for (an absent `start` key, not an undefined one, means
    // the whole file); its end is exclusive.
    const bucket = await this.bucket();
    if (opts.start === undefined && opts.end === undefined) return firstChunkRead(key, bucket.openDownloadStream(latest._id), latest.length);
    const end = Math.min(opts.end === undefined ? latest.length : opts.end + 1, latest.length);
    const start = Math.min(opts.start ?? 0, end);
    return firstChunkRead(key, bucket.openDownloadStream(latest._id, { start, end }), end - start);
  }

  async stat(key: string): Promise<BlobInfo | null> {
    const [latest] = await this.revisions(key);
    return latest ? info(latest) : null;
  }

  async delete(key: string): Promise<boolean> {
    const bucket = await this.bucket();
    const all = await this.revisions(key);
    for (const f of all) await bucket.delete(f._id).catch(() => undefined);
    return all.length > 0;
  }

  async list(prefix: string): Promise<BlobInfo[]> {
    const files = await (await this.bucket())
      .find({ filename: { $regex: `^${escapeRegex(checkBlobPrefix(prefix))}` } }, { sort: { filename: 1, uploadDate: -1 } })
      .toArray();
    const newest = new Map<string, FileDoc>();
    for (const f of files) if (!newest.has(f.filename)) newest.set(f.filename, f);
    return [...newest.values()].map(info).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async close(): Promise<void> {
    await this.staleUploadsRemoved;
    await this.connection.close();
  }
}

export function createGridFsBlobStore(cfg: GridFsBlobStoreConfig): BlobStore {
  return new GridFsBlobStore(cfg);
}
