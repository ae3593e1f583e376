import type { Collection, Doc, Store } from '@gw/store';

export type FilePurpose = 'batch' | 'batch_output';

/** A file's record; its bytes are the blob `blob_key`. */
export interface FileDoc extends Doc {
  account_id: string;
  filename: string;
  purpose: FilePurpose;
  bytes: number;
  /** Lines in the file (JSONL). */
  lines: number;
  blob_key: string;
  created_at_ms: number;
  expires_at_ms: number;
}

/** OpenAI's file object (API-NOTES, files and batches). */
export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: FilePurpose;
  expires_at: number;
  status: 'processed';
}

export const seconds = (ms: number) => Math.floor(ms / 1000);

export function toFileObject(doc: FileDoc): FileObject {
  return {
    id: doc._id, object: 'file', bytes: doc.bytes, created_at: seconds(doc.created_at_ms), filename: doc.filename,
    purpose: doc.purpose, expires_at: seconds(doc.expires_at_ms), status: 'processed',
  };
}

export function filesCollection(store: Store): Collection<FileDoc> {
  return store.collection<FileDoc>('files');
}

export async function ensureFileIndexes(files: Collection<FileDoc>): Promise<void> {
  await files.ensureIndex({ fields: { account_id: 1, created_at_ms: -1 } });
}

/** Files are stored under their id only: account ids are free text, and the record scopes the file. */
export const blobKeyOf = (fileId: string) => `files/${fileId}`;
