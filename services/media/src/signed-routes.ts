import { Router } from 'express';
import { BlobNotFoundError, type BlobStore } from '@gw/blobs';
import { NotFoundError, streamAnswer } from '@gw/platform';
import { SIGNED_PATH, type SignedUrls } from './signed-urls';

/** Serves the blob a signed link names; the link is the only credential (no identity is required). */
export function signedRoutes(urls: SignedUrls, blobs: BlobStore): Router {
  const router = Router();
  router.get(`${SIGNED_PATH}/:token`, async (req, res) => {
    const grant = urls.verify(req.params.token);
    const info = await blobs.stat(grant.blobKey);
    if (!info) throw new NotFoundError('The media behind this link no longer exists');
    let body;
    try {
      body = await blobs.get(grant.blobKey);
    } catch (err) {
      if (err instanceof BlobNotFoundError) throw new NotFoundError('The media behind this link no longer exists');
      throw err;
    }
    res.setHeader('content-type', grant.contentType);
    res.setHeader('content-length', String(info.bytes));
    res.setHeader('cache-control', 'private, no-store');
    if (grant.filename) res.setHeader('content-disposition', `attachment; filename="${grant.filename.replace(/[^\w.-]/g, '_')}"`);
    await streamAnswer(body, res, (err) => req.log.error({ err }, 'reading signed media failed mid-stream'));
  });
  return router;
}
