import { Router } from 'express';
import { requireIdentity } from '@gw/platform';
import { sendBlob } from '../blob-answer';
import type { VideosService } from './videos-service';

/** `Svc-Native-Params: true`: the body is the supplier's own (spec: What the service does, item 8). */
const isNative = (value: string | undefined) => value?.trim().toLowerCase() === 'true';

export function videosRoutes(videos: VideosService): Router {
  const router = Router();
  router.post('/v1/videos', async (req, res) => {
    const { video, requestId } = await videos.create(requireIdentity(req), req.traceId, req.body, isNative(req.get('svc-native-params')));
    res.setHeader('x-request-id', requestId);
    res.json(video);
  });
  router.get('/v1/videos/:video_id', async (req, res) => {
    res.json(await videos.get(requireIdentity(req).accountId, req.params.video_id));
  });
  router.get('/v1/videos/:video_id/content', async (req, res) => {
    const answer = await videos.content(requireIdentity(req).accountId, req.params.video_id, req.query.format);
    switch (answer.format) {
      case 'redirect':
        res.setHeader('cache-control', 'no-store');
        return res.redirect(302, answer.location);
      case 'url':
        return res.json(answer.body);
      case 'binary':
        res.setHeader('content-type', 'video/mp4');
        res.setHeader('content-disposition', `attachment; filename="${answer.filename}"`);
        return sendBlob(req, res, answer.bytes, answer.read, (err) => req.log.error({ err }, 'reading a stored video failed mid-stream'));
    }
  });
  return router;
}
