import { Router, type Request, type Response } from 'express';
import { EventStreamWriter, InputError, isMultipartForm, requireIdentity } from '@gw/platform';
import { pageQuery } from '@gw/store';
import { sendBlob } from '../blob-answer';
import { formFields, readForm } from '../multipart-form';
import { nativeImages } from '../native/native-images';
import { NATIVE_PARAMS_HEADER, wantsNativeParams } from '../native/native-params';
import { IMAGE_FIELDS, MAX_INPUT_IMAGES } from './image-fields';
import type { ImageInputs } from './image-inputs';
import type { CallArchiver } from '@gw/call-archive';
import type { ImageFiles, ImagesService } from './images-service';
import type { MediaBilledCalls } from '../calls/media-billed-calls';
import type { MediaRouter } from '../calls/media-routes';

export interface ImagesRoutesDeps {
  images: ImagesService;
  inputs: ImageInputs;
  router: MediaRouter;
  calls: MediaBilledCalls;
  archive: CallArchiver;
  maxImageBytes: number;
  heartbeatMs: number;
}

/**
 * `POST /v1/images/generations` (JSON; input `images` make it an edit; `Svc-Native-Params: true` takes the
 * supplier's body), `POST /v1/images/edits` (the same, or multipart `image`/`image[]` and `mask` files),
 * and the account's image records: `GET /v1/images`, `GET /v1/images/{id}`, `GET /v1/images/{id}/content`,
 * `DELETE /v1/images/{id}`.
 */
export function imagesRoutes(deps: ImagesRoutesDeps): Router {
  const router = Router();
  const generate = async (req: Request, res: Response) => {
    const identity = requireIdentity(req);
    if (wantsNativeParams(req.headers[NATIVE_PARAMS_HEADER])) {
      if (isMultipartForm(req)) throw new InputError('A supplier-native body is JSON', 'Svc-Native-Params', 'invalid_request');
      const { requestId, body } = await nativeImages(deps, identity, req.traceId, req.body);
      res.setHeader('x-request-id', requestId);
      return void res.json(body);
    }
    const { body, files } = isMultipartForm(req) ? await formBody(req, deps) : { body: jsonBody(req.body), files: null };
    const prepared = await deps.images.prepare(identity, body, files);
    if (prepared.stream) {
      return deps.images.stream(identity, req.traceId, prepared, (requestId) => new EventStreamWriter(res, { format: 'chat', heartbeatMs: deps.heartbeatMs, headers: { 'x-request-id': requestId } }));
    }
    const { requestId, answer } = await deps.images.generate(identity, req.traceId, prepared);
    res.setHeader('x-request-id', requestId);
    res.json(answer);
  };
  router.post('/v1/images/generations', generate);
  router.post('/v1/images/edits', generate);
  router.get('/v1/images', async (req, res) => {
    res.json(await deps.images.list(requireIdentity(req).accountId, pageQuery(req.query)));
  });
  router.get('/v1/images/:image_id', async (req, res) => {
    res.json(await deps.images.get(requireIdentity(req).accountId, req.params.image_id));
  });
  router.get('/v1/images/:image_id/content', async (req, res) => {
    const { record, read } = await deps.images.content(requireIdentity(req).accountId, req.params.image_id);
    res.setHeader('content-type', record.mime_type);
    res.setHeader('content-disposition', `attachment; filename="${record._id}.${record.output_format.replace(/\W/g, '')}"`);
    await sendBlob(req, res, record.bytes, read, (err) => req.log.error({ err, imageId: record._id }, 'reading an image failed mid-stream'));
  });
  router.delete('/v1/images/:image_id', async (req, res) => {
    res.json(await deps.images.delete(requireIdentity(req).accountId, req.params.image_id));
  });
  return router;
}

function jsonBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InputError('The body must be a JSON object', null, 'invalid_request');
  return body as Record<string, unknown>;
}

/** A multipart edit, as OpenAI clients send it: text fields typed by the field table, `image`/`image[]` and `mask` files. */
async function formBody(req: Request, deps: ImagesRoutesDeps): Promise<{ body: Record<string, unknown>; files: ImageFiles }> {
  const form = await readForm(req, { maxFileBytes: deps.maxImageBytes, maxFiles: MAX_INPUT_IMAGES + 1 });
  const body = formFields(form, IMAGE_FIELDS);
  const images = (form.files.image ?? []).map((f, i) => deps.inputs.checked(f.bytes, f.mimeType, `image[${i}]`, f.filename));
  const maskFile = form.files.mask?.[0];
  for (const name of Object.keys(form.files)) if (name !== 'image' && name !== 'mask') throw new InputError(`Unrecognized file field: ${name}`, name, 'unknown_parameter');
  return { body, files: { images, ...(maskFile ? { mask: deps.inputs.checked(maskFile.bytes, maskFile.mimeType, 'mask', maskFile.filename) } : {}) } };
}
