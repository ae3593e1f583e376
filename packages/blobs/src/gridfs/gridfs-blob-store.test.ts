import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import mongoose from 'mongoose';
import { createBlobStore } from '../create-blob-store';
import { BlobTooLargeError, type BlobStore } from '../port';

/** GridFS alone: what a put leaves behind, and the chunks of uploads a killed process cut short. */
jest.setTimeout(60_000);

const ObjectId = mongoose.mongo.ObjectId;
/** A fresh id made `h` hours ago (an ObjectId starts with its time in seconds). */
const hoursAgo = (h: number) => new ObjectId(Math.floor((Date.now() - h * 3_600_000) / 1000).toString(16).padStart(8, '0') + randomBytes(8).toString('hex'));

describe('GridFS blob store: unfinished uploads', () => {
  let url: string;
  let conn: mongoose.Connection;
  let blobs: BlobStore | null = null;

  beforeEach(async () => {
    if (!process.env.MONGO_URL) throw new Error('MONGO_URL is not set: run through jest (its global setup provides it)');
    const u = new URL(process.env.MONGO_URL);
    u.pathname = `/blobs_uploads_${randomUUID().replace(/-/g, '')}`;
    url = u.toString();
    conn = await mongoose.createConnection(url).asPromise();
  });

  afterEach(async () => {
    await blobs?.close();
    blobs = null;
    await conn.dropDatabase();
    await conn.close();
  });

  const collection = (name: string) => conn.db!.collection(`blobs.${name}`);

  it('a put leaves no record of its upload; a refused one leaves neither chunks nor record', async () => {
    blobs = createBlobStore({ engine: 'gridfs', url });
    await blobs.put('files/acct_1/kept', Readable.from([Buffer.from('hello')]));
    await expect(blobs.put('files/acct_1/big', Readable.from([Buffer.alloc(300 * 1024)]), { maxBytes: 1024 })).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(await collection('uploads').countDocuments()).toBe(0);
    expect(await collection('files').countDocuments()).toBe(1);
    expect(await collection('chunks').countDocuments()).toBe(1);
  });

  it('removes, when a store opens, the chunks of an upload cut short over an hour ago, and nothing else', async () => {
    const chunk = (filesId: mongoose.mongo.ObjectId, n: number, id = hoursAgo(2)) => ({ _id: id, files_id: filesId, n, data: new mongoose.mongo.Binary(Buffer.from(`part ${n}`)) });
    // Cut short two hours ago: two chunks, no files document.
    const cut = hoursAgo(2);
    // Begun two hours ago and still being written: its newest chunk is a minute old.
    const slow = hoursAgo(2);
    // Finished (its files document was written) but its record was left behind.
    const finished = hoursAgo(2);
    // Cut short a minute ago: maybe a put still in progress elsewhere, too young to judge.
    const young = new ObjectId();
    await collection('uploads').insertMany([cut, slow, finished, young].map((id, i) => ({ _id: id, key: `files/acct_1/blob-${i}` })));
    await collection('chunks').insertMany([
      chunk(cut, 0), chunk(cut, 1),
      chunk(slow, 0), chunk(slow, 1, new ObjectId()),
      chunk(finished, 0),
      chunk(young, 0, new ObjectId()),
    ]);
    await collection('files').insertOne({ _id: finished, filename: 'files/acct_1/finished', length: 6, chunkSize: 255 * 1024, uploadDate: new Date() });

    blobs = createBlobStore({ engine: 'gridfs', url });
    await blobs.stat('files/acct_1/none');
    await blobs.close();

    const chunksLeft = await collection('chunks').find({}, { projection: { files_id: 1, n: 1 } }).sort({ files_id: 1, n: 1 }).toArray();
    expect(chunksLeft.map((c) => `${String(c.files_id)}:${c.n}`).sort()).toEqual(
      [`${slow}:0`, `${slow}:1`, `${finished}:0`, `${young}:0`].sort(),
    );
    expect((await collection('uploads').find().toArray()).map((u) => String(u._id)).sort()).toEqual([String(slow), String(young)].sort());

    blobs = createBlobStore({ engine: 'gridfs', url });
    expect(await text(await blobs.get('files/acct_1/finished'))).toBe('part 0');
  });
});
