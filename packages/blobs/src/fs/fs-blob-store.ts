import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ByteLimit } from '../byte-limit';
import { BlobNotFoundError, checkBlobKey, checkBlobPrefix, type BlobInfo, type BlobStore, type GetOptions, type PutOptions } from '../port';

/** Where writes in progress live; no key segment may start with a dot, so no key can name it. */
const TEMP_DIR = '.incoming';

/**
 * A temporary file left unwritten this long belongs to no put in progress (each write of a put touches it): a
 * process killed mid-put left it, and the next store on the root removes it.
 */
const STALE_TEMP_MS = 60 * 60_000;

/** Directories remembered at most; past it the memory starts over (each forgotten one costs one mkdir). */
const KNOWN_DIRS_KEPT = 10_000;

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Blobs as files under one root directory, a key's segments as its path. A put streams into a temporary file
 * and renames it into place (atomic on one filesystem), so a crash or a refused upload never leaves a partial
 * blob under its key.
 */
class FsBlobStore implements BlobStore {
  readonly engine = 'fs';

  /** Directories this store made or found: a put into one skips its mkdir (a syscall pair per put otherwise). */
  private readonly knownDirs = new Set<string>();

  /** The removal of temporary files earlier processes left; `close` waits for it. */
  private readonly staleTempsRemoved: Promise<void>;

  constructor(private readonly root: string) {
    this.staleTempsRemoved = this.removeStaleTemps().catch(() => undefined);
  }

  private async removeStaleTemps(): Promise<void> {
    const dir = path.join(this.root, TEMP_DIR);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    const cutoff = Date.now() - STALE_TEMP_MS;
    for (const name of names) {
      const file = path.join(dir, name);
      const s = await stat(file).catch(() => null);
      if (s && s.mtimeMs < cutoff) await rm(file, { force: true });
    }
  }

  /** Runs `op`, which creates an entry in `dir`, making `dir` first unless known; once more if it was removed meanwhile. */
  private async inDir<R>(dir: string, op: () => Promise<R>): Promise<R> {
    if (this.knownDirs.has(dir)) {
      try {
        return await op();
      } catch (err) {
        if (!isMissing(err)) throw err;
        this.knownDirs.delete(dir);
      }
    }
    await mkdir(dir, { recursive: true });
    if (this.knownDirs.size >= KNOWN_DIRS_KEPT) this.knownDirs.clear();
    this.knownDirs.add(dir);
    return op();
  }

  private pathOf(key: string): string {
    return path.join(this.root, ...checkBlobKey(key).split('/'));
  }

  async put(key: string, source: Readable, opts: PutOptions = {}): Promise<BlobInfo> {
    const target = this.pathOf(key);
    const temp = path.join(this.root, TEMP_DIR, randomUUID());
    const limit = new ByteLimit(opts.maxBytes ?? Number.MAX_SAFE_INTEGER);
    try {
      const file = await this.inDir(path.dirname(temp), () => open(temp, 'wx'));
      await pipeline(source, limit, createWriteStream(temp, { fd: file }));
      await this.inDir(path.dirname(target), () => rename(temp, target));
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    return (await this.stat(key))!;
  }

  async get(key: string, opts: GetOptions = {}): Promise<Readable> {
    // Opened before it resolves: a delete after that unlinks the name, and the open file still reads to its end.
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (err) {
      if (isMissing(err)) throw new BlobNotFoundError(key);
      throw err;
    }
    if (!(await handle.stat().then((s) => s.isFile(), () => false))) {
      await handle.close();
      throw new BlobNotFoundError(key);
    }
    return handle.createReadStream({ start: opts.start, end: opts.end });
  }

  async stat(key: string): Promise<BlobInfo | null> {
    try {
      const s = await stat(this.pathOf(key));
      return s.isFile() ? { key, bytes: s.size, createdAtMs: Math.floor(s.mtimeMs) } : null;
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<boolean> {
    try {
      await unlink(this.pathOf(key));
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  async list(prefix: string): Promise<BlobInfo[]> {
    checkBlobPrefix(prefix);
    // Walk only the directory the prefix's complete segments name.
    const dirKey = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const found: BlobInfo[] = [];
    const walk = async (dir: string, keyPrefix: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (err) {
        if (isMissing(err)) return;
        throw err;
      }
      for (const entry of entries) {
        if (entry.name === TEMP_DIR) continue;
        const key = keyPrefix ? `${keyPrefix}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          if (key.startsWith(prefix) || prefix.startsWith(`${key}/`)) await walk(path.join(dir, entry.name), key);
        } else if (entry.isFile() && key.startsWith(prefix)) {
          const info = await this.stat(key);
          if (info) found.push(info);
        }
      }
    };
    await walk(dirKey ? path.join(this.root, ...dirKey.split('/')) : this.root, dirKey);
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async close(): Promise<void> {
    await this.staleTempsRemoved;
  }
}

export function createFsBlobStore(root: string): BlobStore {
  return new FsBlobStore(path.resolve(root));
}
