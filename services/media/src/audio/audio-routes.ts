import { Router, type Request, type Response } from 'express';
import { EventStreamWriter, InputError, isMultipartForm, requireIdentity } from '@gw/platform';
import type { ImageInputs } from '../images/image-inputs';
import { formFields, readForm } from '../multipart-form';
import { NATIVE_PARAMS_HEADER, wantsNativeParams } from '../native/native-params';
import { TRANSCRIPTION_FIELDS } from './audio-fields';
import type { AudioSources } from './audio-source';
import type { SpeechCall, SpeechService } from './speech-service';
import type { TranscriptionService } from './transcription-service';

export interface AudioRoutesDeps {
  transcription: TranscriptionService;
  speech: SpeechService;
  sources: AudioSources;
  /** Native speech bodies may reference stored assets (`asset://<id>`). */
  inputs: ImageInputs;
  maxAudioBytes: number;
  heartbeatMs: number;
}

/** `POST /v1/audio/transcriptions` (multipart or JSON) and `POST /v1/audio/speech` (normalized or native body). */
export function audioRoutes(deps: AudioRoutesDeps): Router {
  const router = Router();
  router.post('/v1/audio/transcriptions', async (req, res) => {
    const identity = requireIdentity(req);
    const { body, file } = isMultipartForm(req) ? await formBody(req, deps.maxAudioBytes) : { body: jsonBody(req.body), file: undefined };
    const prepared = await deps.transcription.prepare(body, () => deps.sources.resolve(body, file));
    if (prepared.stream) {
      return deps.transcription.stream(identity, req.traceId, prepared, (requestId) => new EventStreamWriter(res, { format: 'chat', heartbeatMs: deps.heartbeatMs, headers: { 'x-request-id': requestId } }));
    }
    const { requestId, answer } = await deps.transcription.transcribe(identity, req.traceId, prepared);
    res.setHeader('x-request-id', requestId);
    if (answer.type === 'text') res.type('text/plain').send(answer.body);
    else res.json(answer.body);
  });
  router.post('/v1/audio/speech', async (req, res) => {
    const identity = requireIdentity(req);
    const call = wantsNativeParams(req.headers[NATIVE_PARAMS_HEADER])
      ? await deps.speech.speakNative(identity, req.traceId, req.body, (ref, param) => deps.inputs.assetUrl(identity.accountId, ref, param))
      : await deps.speech.speak(identity, req.traceId, jsonBody(req.body));
    await sendAudio(req, res, call);
  });
  return router;
}

/** Streams the audio as it arrives; a provider failure after the first byte cuts the response (the client sees a short body). */
async function sendAudio(req: Request, res: Response, call: SpeechCall): Promise<void> {
  res.status(200);
  res.setHeader('content-type', call.contentType);
  res.setHeader('x-request-id', call.requestId);
  res.setHeader('cache-control', 'no-store');
  res.flushHeaders();
  let cancelled = false;
  let failed = false;
  res.once('close', () => { if (!res.writableFinished) cancelled = true; });
  try {
    for await (const chunk of call.chunks) {
      if (cancelled) continue;
      if (!res.write(chunk)) await new Promise<void>((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
    }
    res.end();
  } catch (err) {
    failed = true;
    req.log.warn({ err }, 'speech audio failed mid-stream; cutting the response');
    res.destroy();
  } finally {
    call.finish(cancelled, failed);
  }
}

function jsonBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InputError('The body must be a JSON object', null, 'invalid_request');
  return body as Record<string, unknown>;
}

async function formBody(req: Request, maxAudioBytes: number) {
  const form = await readForm(req, { maxFileBytes: maxAudioBytes, maxFiles: 1 });
  const body = formFields(form, TRANSCRIPTION_FIELDS);
  for (const name of Object.keys(form.files)) if (name !== 'file') throw new InputError(`Unrecognized file field: ${name}`, name, 'unknown_parameter');
  return { body, file: form.files.file?.[0] };
}
