import * as path from 'node:path';
import { createFsBlobStore } from './fs/fs-blob-store';
import type { BlobStore } from './port';

export type BlobStoreConfig = { engine: 'fs'; root: string } | { engine: 'gridfs'; url: string; bucket?: string };

/** The engine follows the store's: files under the data dir with the embedded store, GridFS with MongoDB. */
export function blobConfigFor(store: { engine: 'embedded'; dataDir: string } | { engine: 'mongo'; url: string }): BlobStoreConfig {
  return store.engine === 'mongo' ? { engine: 'gridfs', url: store.url } : { engine: 'fs', root: path.join(store.dataDir, 'blobs') };
}

export function createBlobStore(cfg: BlobStoreConfig): BlobStore {
  if (cfg.engine === 'fs') return createFsBlobStore(cfg.root);
  // Loaded only when chosen, like the MongoDB store: the driver is slow to load and the files engine needs none of it.
  const { createGridFsBlobStore } = require('./gridfs/gridfs-blob-store') as typeof import('./gridfs/gridfs-blob-store');
  return createGridFsBlobStore({ url: cfg.url, bucket: cfg.bucket });
}
