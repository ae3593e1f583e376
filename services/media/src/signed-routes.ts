import { Router } from 'express';
import type { BlobStore } from '@gw/blobs';
import { NotFoundError } from '@gw/platform';
import { blobReader, sendBlob } from './blob-answer';
import { SIGNED_PATH, type SignedUrls } from './signed-urls';

/** Serves the blob a signed link names; the link is the only credential (no identity is required). */
export function signedRoutes(urls: SignedUrls, blobs: BlobStore): Router {
  const router = Router();
  router.get(`${SIGNED_PATH}/:token`, async (req, res) => {
    const grant = urls.verify(req.params.token);
    const info = await blobs.stat(grant.blobKey);
    if (!info) throw new NotFoundError('The media behind this link no longer exists');
    const read = blobReader(blobs, grant.blobKey, () => new NotFoundError('The media behind this link no longer exists'));
    res.setHeader('content-type', grant.contentType);
    res.setHeader('cache-control', 'private, no-store');
    if (grant.filename) res.setHeader('content-disposition', `attachment; filename="${grant.filename.replace(/[^\w.-]/g, '_')}"`);
    await sendBlob(req, res, info.bytes, read, (err) => req.log.error({ err }, 'reading signed media failed mid-stream'));
  });
  return router;
}
