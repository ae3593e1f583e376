import {
  readServerSentEvents, type ImageRequest, type ImageResult, type ImageStreamEvent, type MediaCapabilities, type MediaProvider, type MediaTarget,
  type NativeMediaAnswer, type NativeMediaCall, type SpeechAudio, type SpeechRequest, type Transcription, type TranscriptionRequest, type TranscriptionStreamEvent,
} from '@gw/provider-spec';
import { Deadline } from '../http/deadline';
import { mapTransportError } from '../http/upstream-errors';
import { readCappedText } from '../http/read-capped-text';
import { checkUpstreamShape, MAX_ANSWER_BYTES, parseUpstreamJson, readBoundedText } from '../http/upstream-json';
import { mapOpenAIHttpError } from '../openai-compatible/openai-error';
import {
  fromOpenAITranscription, OPENAI_SPEECH_FIELDS, OPENAI_SPEECH_FORMATS, OPENAI_TRANSCRIPTION_FIELDS, OPENAI_TRANSCRIPTION_FORMATS,
  SPEECH_CONTENT_TYPES, toOpenAISpeechBody, toOpenAITranscriptionForm, transcriptionUsageOf,
} from './convert-openai-audio';
import {
  fromOpenAIImages, fromOpenAIImageStreamEvent, imageUsageOf, OPENAI_IMAGE_EDIT_FIELDS, OPENAI_IMAGE_GENERATION_FIELDS,
  toOpenAIEditForm, toOpenAIGenerationBody,
} from './convert-openai-images';
import { openAIImagesResponseSchema, openAIImageStreamEventSchema, openAITranscriptionSchema, openAITranscriptStreamEventSchema } from './openai-media-api';

export const OPENAI_MEDIA_CAPABILITIES: MediaCapabilities = {
  imageGeneration: OPENAI_IMAGE_GENERATION_FIELDS,
  imageEdit: OPENAI_IMAGE_EDIT_FIELDS,
  imageStream: true,
  transcription: OPENAI_TRANSCRIPTION_FIELDS,
  transcriptionFormats: OPENAI_TRANSCRIPTION_FORMATS,
  speech: OPENAI_SPEECH_FIELDS,
  speechFormats: OPENAI_SPEECH_FORMATS,
  native: ['image', 'speech'],
};

const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** OpenAI's images (`/images/generations`, `/images/edits`) and audio (`/audio/transcriptions`, `/audio/speech`) APIs. */
export class OpenAIMediaProvider implements MediaProvider {
  readonly kind = 'openai-compatible';
  readonly capabilities = OPENAI_MEDIA_CAPABILITIES;

  async images(req: ImageRequest, target: MediaTarget, signal?: AbortSignal): Promise<ImageResult> {
    const { res, deadline } = await this.send(target, imageEndpoint(req), imageBody(req, target, false), signal);
    try {
      const data = checkUpstreamShape(parseUpstreamJson(await answerText(res), 'response'), openAIImagesResponseSchema, 'response');
      return fromOpenAIImages(data, outputFormatOf(req), requestIdOf(res, `img-${data.created}`), target.providerModel);
    } catch (err) {
      throw mapTransportError(err, deadline);
    } finally {
      deadline.dispose();
    }
  }

  async imagesStream(req: ImageRequest, target: MediaTarget, signal?: AbortSignal): Promise<AsyncIterable<ImageStreamEvent>> {
    const { res, deadline } = await this.send(target, imageEndpoint(req), imageBody(req, target, true), signal);
    const providerResponseId = requestIdOf(res, `img-stream-${Date.now()}`);
    const state = { index: 0, outputFormat: outputFormatOf(req) };
    return (async function* () {
      let usage = imageUsageOf(undefined, 0);
      try {
        for await (const data of sseData(res, deadline)) {
          const raw = checkUpstreamShape(parseUpstreamJson(data, 'stream event'), openAIImageStreamEventSchema, 'stream event');
          const event = fromOpenAIImageStreamEvent(raw, state);
          if (!event) continue;
          if (event.type === 'completed') usage = imageUsageOf(raw.usage, state.index);
          yield event;
        }
      } finally {
        deadline.dispose();
      }
      yield { type: 'done', usage, servedModel: target.providerModel, providerResponseId } satisfies ImageStreamEvent;
    })();
  }

  async transcribe(req: TranscriptionRequest, target: MediaTarget, signal?: AbortSignal): Promise<Transcription> {
    const { res, deadline } = await this.send(target, '/audio/transcriptions', toOpenAITranscriptionForm(req, target.providerModel, false), signal);
    try {
      const text = await answerText(res);
      const id = requestIdOf(res, `tr-${Date.now()}`);
      // text, srt and vtt answer the transcript itself, not JSON.
      if (!['json', 'verbose_json'].includes(req.responseFormat)) return { text, usage: {}, servedModel: target.providerModel, providerResponseId: id };
      const data = checkUpstreamShape(parseUpstreamJson(text, 'response'), openAITranscriptionSchema, 'response');
      return fromOpenAITranscription(data, target.providerModel, id);
    } catch (err) {
      throw mapTransportError(err, deadline);
    } finally {
      deadline.dispose();
    }
  }

  async transcribeStream(req: TranscriptionRequest, target: MediaTarget, signal?: AbortSignal): Promise<AsyncIterable<TranscriptionStreamEvent>> {
    const { res, deadline } = await this.send(target, '/audio/transcriptions', toOpenAITranscriptionForm(req, target.providerModel, true), signal);
    const id = requestIdOf(res, `tr-${Date.now()}`);
    return (async function* () {
      try {
        for await (const data of sseData(res, deadline)) {
          const e = checkUpstreamShape(parseUpstreamJson(data, 'stream event'), openAITranscriptStreamEventSchema, 'stream event');
          if (e.type === 'transcript.text.delta' && e.delta !== undefined) yield { type: 'delta', delta: e.delta } satisfies TranscriptionStreamEvent;
          if (e.type === 'transcript.text.done') {
            yield { type: 'done', transcription: { text: e.text ?? '', usage: transcriptionUsageOf(e.usage, undefined), servedModel: target.providerModel, providerResponseId: id } } satisfies TranscriptionStreamEvent;
          }
        }
      } finally {
        deadline.dispose();
      }
    })();
  }

  async speech(req: SpeechRequest, target: MediaTarget, signal?: AbortSignal): Promise<SpeechAudio> {
    const { res, deadline } = await this.send(target, '/audio/speech', JSON.stringify(toOpenAISpeechBody(req, target.providerModel)), signal);
    return audioOf(res, deadline, SPEECH_CONTENT_TYPES[req.responseFormat] ?? 'application/octet-stream');
  }

  async native(call: NativeMediaCall, target: MediaTarget, signal?: AbortSignal): Promise<NativeMediaAnswer> {
    const endpoint = call.kind === 'image' ? '/images/generations' : '/audio/speech';
    const { res, deadline } = await this.send(target, endpoint, JSON.stringify(call.body), signal);
    if (call.kind === 'speech') {
      const format = typeof call.body.response_format === 'string' ? call.body.response_format : 'mp3';
      return { type: 'audio', audio: await audioOf(res, deadline, SPEECH_CONTENT_TYPES[format] ?? 'application/octet-stream') };
    }
    try {
      const body = parseUpstreamJson(await answerText(res), 'response');
      return { type: 'json', body, providerResponseId: requestIdOf(res, `img-${Date.now()}`) };
    } catch (err) {
      throw mapTransportError(err, deadline);
    } finally {
      deadline.dispose();
    }
  }

  /** Sends under the target's deadline; resolves on a 2xx answer (the deadline still armed), throws the mapped error otherwise. */
  private async send(target: MediaTarget, endpoint: string, body: string | FormData, signal?: AbortSignal): Promise<{ res: Response; deadline: Deadline }> {
    const deadline = new Deadline(target.timeoutMs, signal);
    try {
      const headers: Record<string, string> = { ...lowerCased(target.extraHeaders) };
      if (typeof body === 'string') headers['content-type'] = 'application/json';
      if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
      const res = await fetch(`${target.baseUrl.replace(/\/+$/, '')}${endpoint}`, { method: 'POST', headers, body, signal: deadline.signal });
      if (res.ok) return { res, deadline };
      const text = await readCappedText(chunksOf(res), MAX_ERROR_BODY_BYTES);
      throw mapOpenAIHttpError(res.status, Object.fromEntries(res.headers), text);
    } catch (err) {
      deadline.dispose();
      throw mapTransportError(err, deadline);
    }
  }
}

function imageEndpoint(req: ImageRequest): string {
  return req.images.length > 0 ? '/images/edits' : '/images/generations';
}

function imageBody(req: ImageRequest, target: MediaTarget, stream: boolean): string | FormData {
  return req.images.length > 0 ? toOpenAIEditForm(req, target.providerModel, stream) : JSON.stringify(toOpenAIGenerationBody(req, target.providerModel, stream));
}

function outputFormatOf(req: ImageRequest): string {
  return typeof req.params.output_format === 'string' ? req.params.output_format : 'png';
}

/** A fetch answer's body chunks (none when it has no body). */
function chunksOf(res: Response): AsyncIterable<Uint8Array> {
  return res.body ?? (async function* () {})();
}

/** A 2xx answer's text, refused past `MAX_ANSWER_BYTES`. */
function answerText(res: Response): Promise<string> {
  return readBoundedText({
    chunks: chunksOf(res), text: () => res.text(), declaredLength: res.headers.get('content-length'),
    drop: () => void res.body?.cancel().catch(() => {}),
  }, MAX_ANSWER_BYTES, 'response');
}

function requestIdOf(res: Response, fallback: string): string {
  return res.headers.get('x-request-id') ?? fallback;
}

function lowerCased(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
}

/** The `data` of each event of an SSE body; the deadline's timer stops once the first bytes arrived (the stream may run long). */
async function* sseData(res: Response, deadline: Deadline): AsyncGenerator<string> {
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for await (const chunk of chunksOf(res)) {
      deadline.stopTimer();
      yield chunk;
    }
  }
  try {
    for await (const event of readServerSentEvents(chunks())) {
      if (event.data === '[DONE]') return;
      yield event.data;
    }
  } catch (err) {
    throw mapTransportError(err, deadline);
  }
}

/** The audio body as it arrives, chunk by chunk. */
function audioOf(res: Response, deadline: Deadline, fallbackType: string): SpeechAudio {
  return {
    contentType: res.headers.get('content-type') ?? fallbackType,
    providerResponseId: requestIdOf(res, `speech-${Date.now()}`),
    chunks: (async function* () {
      try {
        for await (const chunk of chunksOf(res)) {
          deadline.stopTimer();
          yield Buffer.from(chunk);
        }
      } catch (err) {
        throw mapTransportError(err, deadline);
      } finally {
        deadline.dispose();
      }
    })(),
  };
}
