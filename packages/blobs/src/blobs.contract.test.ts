import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import mongoose from 'mongoose';
import { createBlobStore, type BlobStoreConfig } from './create-blob-store';
import { BlobNotFoundError, BlobTooLargeError, type BlobStore } from './port';

/** One contract, both engines: the local filesystem and GridFS on the MongoDB-wire server MONGO_URL names. */
jest.setTimeout(60_000);

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

/** A source that yields `chunks` one by one, as a network upload arrives. */
const chunked = (...chunks: string[]) => Readable.from(chunks.map((c) => Buffer.from(c)));

describe.each<'fs' | 'gridfs'>(['fs', 'gridfs'])('blob store contract (%s engine)', (engine) => {
  let cfg: BlobStoreConfig;
  let blobs: BlobStore;

  beforeEach(async () => {
    if (engine === 'fs') {
      cfg = { engine: 'fs', root: await mkdtemp(path.join(tmpdir(), 'gw-blobs-')) };
    } else {
      if (!process.env.MONGO_URL) throw new Error('MONGO_URL is not set: run through jest (its global setup provides it)');
      cfg = { engine: 'gridfs', url: withDatabase(process.env.MONGO_URL, `blobs_contract_${randomUUID().replace(/-/g, '')}`) };
    }
    blobs = createBlobStore(cfg);
  });

  afterEach(async () => {
    await blobs.close();
    if (cfg.engine === 'fs') {
      await rm(cfg.root, { recursive: true, force: true });
    } else {
      const conn = await mongoose.createConnection(cfg.url).asPromise();
      await conn.dropDatabase();
      await conn.close();
    }
  });

  it('streams a blob in and reads it back whole and by range, with its size', async () => {
    const written = await blobs.put('files/acct_1/file-a', chunked('hello ', 'blob ', 'world'));
    expect(written).toEqual({ key: 'files/acct_1/file-a', bytes: 16, createdAtMs: expect.any(Number) });
    expect(await text(await blobs.get('files/acct_1/file-a'))).toBe('hello blob world');
    expect(await text(await blobs.get('files/acct_1/file-a', { start: 6, end: 9 }))).toBe('blob');
    expect(await text(await blobs.get('files/acct_1/file-a', { start: 11 }))).toBe('world');
    expect(await blobs.stat('files/acct_1/file-a')).toEqual(written);
  });

  it('keeps large binary content byte for byte', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) % 256;
    const parts = [big.subarray(0, 1_000_000), big.subarray(1_000_000, 2_500_000), big.subarray(2_500_000)];
    expect((await blobs.put('big/one', Readable.from(parts))).bytes).toBe(big.length);
    const chunks: Buffer[] = [];
    for await (const c of await blobs.get('big/one')) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(big)).toBe(true);
  });

  it('refuses a put past its byte limit while streaming, and keeps nothing of it; the previous blob stays', async () => {
    await blobs.put('files/acct_1/file-b', chunked('first version'));
    await expect(blobs.put('files/acct_1/file-b', chunked('0123456789', '0123456789', 'x'), { maxBytes: 20 })).rejects.toBeInstanceOf(BlobTooLargeError);
    await expect(blobs.put('files/acct_1/file-c', chunked('0123456789', '0123456789', 'x'), { maxBytes: 20 })).rejects.toMatchObject({ status: 413 });
    expect(await text(await blobs.get('files/acct_1/file-b'))).toBe('first version');
    expect(await blobs.stat('files/acct_1/file-c')).toBeNull();
    expect((await blobs.list('files/')).map((b) => b.key)).toEqual(['files/acct_1/file-b']);
    // Exactly at the limit is allowed.
    expect((await blobs.put('files/acct_1/file-d', chunked('0123456789', '0123456789'), { maxBytes: 20 })).bytes).toBe(20);
    if (cfg.engine === 'fs') expect(await readdir(path.join(cfg.root, '.incoming'))).toEqual([]);
  });

  it('a source that fails midway leaves no blob', async () => {
    async function* failing() {
      yield Buffer.from('partial');
      throw new Error('client went away');
    }
    await expect(blobs.put('files/acct_1/cut', Readable.from(failing()))).rejects.toThrow('client went away');
    expect(await blobs.stat('files/acct_1/cut')).toBeNull();
  });

  it('replaces a blob with a new put, lists by prefix in key order, and deletes', async () => {
    await blobs.put('files/acct_2/file-z', chunked('z'));
    await blobs.put('files/acct_1/file-y', chunked('old'));
    await blobs.put('files/acct_1/file-y', chunked('newer'));
    await blobs.put('files/acct_1/file-x', chunked('x'));
    await blobs.put('outputs/acct_1/o', chunked('o'));
    expect(await text(await blobs.get('files/acct_1/file-y'))).toBe('newer');
    expect((await blobs.list('files/acct_1/')).map((b) => [b.key, b.bytes])).toEqual([['files/acct_1/file-x', 1], ['files/acct_1/file-y', 5]]);
    expect((await blobs.list('files/acct_1/file-x')).map((b) => b.key)).toEqual(['files/acct_1/file-x']);
    expect((await blobs.list('files/')).map((b) => b.key)).toEqual(['files/acct_1/file-x', 'files/acct_1/file-y', 'files/acct_2/file-z']);
    expect(await blobs.list('nothing/')).toEqual([]);
    expect(await blobs.delete('files/acct_1/file-y')).toBe(true);
    expect(await blobs.delete('files/acct_1/file-y')).toBe(false);
    expect(await blobs.stat('files/acct_1/file-y')).toBeNull();
    await expect(blobs.get('files/acct_1/file-y')).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  it('a put of a key declared new returns its size; put again (a redelivery) it reads once, and one delete removes it', async () => {
    expect(await blobs.put('archive/2026-11-27/req-1.json', chunked('{"a":', '1}'), { keyIsNew: true })).toMatchObject({ key: 'archive/2026-11-27/req-1.json', bytes: 7 });
    await blobs.put('archive/2026-11-27/req-1.json', chunked('{"a":1}'), { keyIsNew: true });
    expect(await text(await blobs.get('archive/2026-11-27/req-1.json'))).toBe('{"a":1}');
    expect((await blobs.list('archive/')).map((b) => [b.key, b.bytes])).toEqual([['archive/2026-11-27/req-1.json', 7]]);
    expect(await blobs.delete('archive/2026-11-27/req-1.json')).toBe(true);
    expect(await blobs.stat('archive/2026-11-27/req-1.json')).toBeNull();
  });

  it('a get racing a delete either finds nothing or reads every byte, never a stream that fails before its first byte', async () => {
    // A reader serving a download sends its headers once `get` resolves: an error after that cuts the response.
    for (let i = 0; i < 40; i++) {
      const key = `files/acct_1/race-${i}`;
      await blobs.put(key, chunked('all ', 'of ', 'it'));
      const [got] = await Promise.all([
        blobs.get(key).then(text, (err: unknown) => err),
        // Late by a turn of the loop, so the delete lands between the lookup and the first read as often as not.
        new Promise((resolve) => setImmediate(resolve)).then(() => blobs.delete(key)),
      ]);
      if (!(got instanceof BlobNotFoundError)) expect(got).toBe('all of it');
    }
  });

  it('a blob deleted after get resolved is still read to its end', async () => {
    await blobs.put('files/acct_1/kept-open', chunked('still ', 'here'));
    const body = await blobs.get('files/acct_1/kept-open');
    expect(await blobs.delete('files/acct_1/kept-open')).toBe(true);
    expect(await text(body)).toBe('still here');
  });

  it('a put still lands after its directories were removed behind the store\'s back', async () => {
    await blobs.put('calls/2026/a', chunked('one'));
    if (cfg.engine === 'fs') await rm(cfg.root, { recursive: true, force: true });
    await blobs.put('calls/2026/b', chunked('two'));
    expect(await text(await blobs.get('calls/2026/b'))).toBe('two');
  });

  it('refuses keys that could escape its root or hide among its own names', async () => {
    for (const key of ['../escape', 'a/../../b', '/absolute', 'a//b', '.incoming/x', 'a/.', 'back\\slash', 'a b', '']) {
      await expect(blobs.put(key, chunked('x'))).rejects.toThrow(RangeError);
      await expect(blobs.stat(key)).rejects.toThrow(RangeError);
    }
    await expect(blobs.list('../')).rejects.toThrow(RangeError);
  });
});
