import type { Readable } from 'node:stream';
import { BlobNotFoundError, type BlobStore } from '@gw/blobs';
import { OutboundRequestError, type GuardedHttpClient } from '@gw/net-guard';
import { InputError, PayloadTooLargeError } from '@gw/platform';
import type { MediaInput } from '@gw/provider-spec';
import type { Collection } from '@gw/store';
import type { SignedUrls } from '../signed-urls';
import { ASSET_SCHEME, type ImageRecord } from './image-records';

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);
const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]+)$/i;

/**
 * Input images and masks, however a caller names them: an `asset://<id>` of one of the account's own stored
 * images, a `data:` URL, an HTTPS URL (fetched through the address guard: internal addresses, redirects to them
 * and oversize bodies are refused), or a multipart file. Each failure is a 400 naming the field it came from.
 */
export class ImageInputs {
  constructor(
    private readonly records: Collection<ImageRecord>,
    private readonly blobs: BlobStore,
    private readonly client: GuardedHttpClient,
    private readonly signedUrls: SignedUrls,
    private readonly limits: { maxBytes: number; timeoutMs: number },
  ) {}

  /** The account's own image named by `asset://<id>`; anything else (another account's, deleted, unknown) is a 400. */
  async asset(accountId: string, ref: string, param: string): Promise<ImageRecord> {
    const id = ref.slice(ASSET_SCHEME.length);
    const record = id ? await this.records.findOne({ _id: id, account_id: accountId }) : null;
    if (!record) throw new InputError(`${param} names no stored image of this account: ${ref}`, param, 'asset_not_found');
    return record;
  }

  /** A short-lived signed URL for an asset reference (native bodies hand providers URLs, not bytes). */
  async assetUrl(accountId: string, ref: string, param: string): Promise<string> {
    const record = await this.asset(accountId, ref, param);
    return this.signedUrls.sign({ blobKey: record.blob_key, contentType: record.mime_type }).url;
  }

  async resolve(accountId: string, ref: unknown, param: string): Promise<MediaInput> {
    if (typeof ref !== 'string' || ref === '') throw new InputError(`${param} must be an asset://, data: or https URL`, param, 'invalid_type');
    if (ref.startsWith(ASSET_SCHEME)) {
      const record = await this.asset(accountId, ref, param);
      let bytes: Buffer;
      try {
        bytes = await readAll(await this.blobs.get(record.blob_key));
      } catch (err) {
        // Deleted between reading its record and its bytes: the same 400 as a moment later.
        if (err instanceof BlobNotFoundError) throw new InputError(`${param} names no stored image of this account: ${ref}`, param, 'asset_not_found');
        throw err;
      }
      return { bytes, mimeType: record.mime_type, filename: `${record._id}.${record.output_format}` };
    }
    if (ref.startsWith('data:')) {
      const m = DATA_URL.exec(ref);
      if (!m) throw new InputError(`${param} is not a base64 image data URL`, param, 'invalid_value');
      return this.checked(Buffer.from(m[2], 'base64'), m[1].toLowerCase(), param);
    }
    let fetched;
    try {
      fetched = await this.client.fetch(ref, { timeoutMs: this.limits.timeoutMs, param, maxBytes: this.limits.maxBytes });
    } catch (err) {
      if (err instanceof OutboundRequestError) {
        if (err.kind === 'too_large') throw new PayloadTooLargeError(`${param} is larger than ${this.limits.maxBytes} bytes`);
        throw new InputError(`${param} could not be fetched: ${err.message}`, param, 'fetch_failed');
      }
      throw err;
    }
    if (fetched.status !== 200) throw new InputError(`${param} could not be fetched: HTTP ${fetched.status}`, param, 'fetch_failed');
    return this.checked(fetched.body, (fetched.contentType ?? '').split(';')[0].trim().toLowerCase(), param);
  }

  checked(bytes: Buffer, declaredType: string, param: string, filename?: string): MediaInput {
    // An upload with no real type (curl's default, many SDKs') is taken for what its bytes are.
    const mimeType = declaredType === '' || declaredType === 'application/octet-stream' ? sniffImage(bytes) ?? declaredType : declaredType;
    if (!IMAGE_TYPES.has(mimeType)) throw new InputError(`${param} must be a PNG, JPEG or WebP image (got ${mimeType || 'no type'})`, param, 'invalid_image');
    if (bytes.length === 0) throw new InputError(`${param} is empty`, param, 'invalid_image');
    if (bytes.length > this.limits.maxBytes) throw new PayloadTooLargeError(`${param} is larger than ${this.limits.maxBytes} bytes`);
    return { bytes, mimeType, filename: filename ?? `${param.replace(/\W/g, '_')}.${mimeType.split('/')[1]}` };
  }
}

function sniffImage(b: Buffer): string | null {
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 12 && b.toString('ascii', 0, 4) === 'RIFF' && b.toString('ascii', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}
