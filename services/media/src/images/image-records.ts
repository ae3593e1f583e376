import { randomUUID } from 'node:crypto';
import type { Collection, Doc, Store } from '@gw/store';

/**
 * One stored image: every image the gateway generates is kept through the blob port under its record id,
 * which is also its asset id (`asset://<id>`) for later requests. Scoped to the account that generated it.
 */
export interface ImageRecord extends Doc {
  account_id: string;
  /** The call that generated it (the billing lookup's request id). */
  request_id: string;
  model: string;
  /** Position in its request's `data[]`. */
  index: number;
  /** The request's whole prompt: the request's field checks bound it (the model's `max`, else 32,000 characters). */
  prompt: string;
  output_format: string;
  mime_type: string;
  size: string | null;
  bytes: number;
  blob_key: string;
  metadata: Record<string, unknown> | null;
  created_at_ms: number;
}

/** The image object of `GET /v1/images` and `GET /v1/images/{id}`. */
export interface ImageObject {
  id: string;
  object: 'image';
  created_at: number;
  model: string;
  request_id: string;
  index: number;
  prompt: string;
  output_format: string;
  size: string | null;
  bytes: number;
  metadata: Record<string, unknown> | null;
  /** What to pass as an input image or mask of a later request. */
  asset: string;
}

export const newImageId = () => `img_${randomUUID().replace(/-/g, '')}`;
export const imageBlobKey = (id: string) => `media/images/${id}`;
export const ASSET_SCHEME = 'asset://';

const MIME_OF: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', jpg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif' };
export const imageMimeType = (format: string) => MIME_OF[format.toLowerCase()] ?? 'application/octet-stream';

export function imagesCollection(store: Store): Collection<ImageRecord> {
  return store.collection<ImageRecord>('media_images');
}

export async function ensureImageIndexes(images: Collection<ImageRecord>): Promise<void> {
  await images.ensureIndex({ fields: { account_id: 1, created_at_ms: -1 } });
}

export function toImageObject(r: ImageRecord): ImageObject {
  return {
    id: r._id, object: 'image', created_at: Math.floor(r.created_at_ms / 1000), model: r.model, request_id: r.request_id, index: r.index,
    prompt: r.prompt, output_format: r.output_format, size: r.size, bytes: r.bytes, metadata: r.metadata, asset: `${ASSET_SCHEME}${r._id}`,
  };
}
