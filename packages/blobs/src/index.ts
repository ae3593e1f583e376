export * from './port';
export { blobConfigFor, createBlobStore, type BlobStoreConfig } from './create-blob-store';
export { createFsBlobStore } from './fs/fs-blob-store';
export type { GridFsBlobStoreConfig } from './gridfs/gridfs-blob-store';
