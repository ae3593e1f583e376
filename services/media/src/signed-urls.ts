import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { NotFoundError, PermissionError } from '@gw/platform';

/** The public path under which signed media links are served (the edge lets it through without an API key). */
export const SIGNED_PATH = '/v1/media/signed';

/** What a signed link grants: reading one blob, as this content type (and download name), until `expiresAt`. */
export interface SignedBlob {
  blobKey: string;
  contentType: string;
  /** Served as an attachment under this name; inline when absent. */
  filename?: string;
}

const claimsSchema = z.object({ k: z.string().min(1), t: z.string().min(1), f: z.string().optional(), e: z.number().int() });

/**
 * Short-lived fetchable URLs for stored media: the claims (blob, type, expiry) travel in the URL, signed with
 * HMAC-SHA256 under a key derived from the platform secret, so any media instance verifies any link and
 * nothing is stored per link. A link names a blob, never an account: whoever holds it may read that blob
 * until it expires, which is what a provider fetching an input image or a client following a redirect needs.
 */
export class SignedUrls {
  private readonly key: Buffer;

  constructor(secret: string, private readonly publicBaseUrl: string, readonly ttlSeconds: number, private readonly now = Date.now) {
    this.key = createHmac('sha256', secret).update('media-signed-url-v1').digest();
  }

  /** An absolute URL on the gateway's public address, valid for `ttlSeconds` (or the given lifetime). */
  sign(blob: SignedBlob, ttlSeconds = this.ttlSeconds): { url: string; expiresIn: number } {
    const claims = { k: blob.blobKey, t: blob.contentType, ...(blob.filename ? { f: blob.filename } : {}), e: Math.floor(this.now() / 1000) + ttlSeconds };
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const base = this.publicBaseUrl.replace(/\/+$/, '');
    return { url: `${base}${SIGNED_PATH}/${body}.${this.mac(body)}`, expiresIn: ttlSeconds };
  }

  /** The blob a token grants; a bad signature is a 403, an expired link a 403 saying so, garbage a 404. */
  verify(token: string): SignedBlob {
    const [body, mac, extra] = token.split('.');
    if (!body || !mac || extra !== undefined) throw new NotFoundError('No such media link');
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new PermissionError('The media link signature is invalid', 'invalid_signature');
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw new NotFoundError('No such media link');
    }
    const claims = claimsSchema.safeParse(parsed);
    if (!claims.success) throw new NotFoundError('No such media link');
    if (claims.data.e * 1000 <= this.now()) throw new PermissionError('The media link has expired', 'link_expired');
    return { blobKey: claims.data.k, contentType: claims.data.t, filename: claims.data.f };
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
