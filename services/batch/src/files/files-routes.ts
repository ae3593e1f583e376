import { Router } from 'express';
import { InputError, requireIdentity, streamAnswer } from '@gw/platform';
import { pageQuery } from '../list-page';
import { toFileObject } from './file-records';
import type { FilesService } from './files-service';

export function filesRoutes(files: FilesService): Router {
  const router = Router();
  router.post('/v1/files', async (req, res) => {
    res.json(await files.upload(requireIdentity(req).accountId, req));
  });
  router.get('/v1/files', async (req, res) => {
    const purpose = req.query.purpose;
    if (purpose !== undefined && purpose !== 'batch' && purpose !== 'batch_output') throw new InputError('purpose must be batch or batch_output', 'purpose');
    res.json(await files.list(requireIdentity(req).accountId, { ...pageQuery(req.query), purpose }));
  });
  router.get('/v1/files/:file_id', async (req, res) => {
    res.json(toFileObject(await files.get(requireIdentity(req).accountId, req.params.file_id)));
  });
  router.get('/v1/files/:file_id/content', async (req, res) => {
    const { doc, body } = await files.content(requireIdentity(req).accountId, req.params.file_id);
    res.setHeader('content-type', 'application/octet-stream');
    res.setHeader('content-length', String(doc.bytes));
    res.setHeader('content-disposition', `attachment; filename="${doc.filename.replace(/[^\w.-]/g, '_')}"`);
    await streamAnswer(body, res, (err) => req.log.error({ err, fileId: doc._id }, 'reading a file failed mid-stream'));
  });
  router.delete('/v1/files/:file_id', async (req, res) => {
    res.json(await files.delete(requireIdentity(req).accountId, req.params.file_id));
  });
  return router;
}
