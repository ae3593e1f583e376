import type { IncomingHttpHeaders } from 'node:http';
import type { FormData } from 'undici';
import {
  type ImageRequest, type ImageResult, type ImageStreamEvent, type MediaCapabilities, type MediaProvider, type MediaTarget,
  type NativeMediaAnswer, type NativeMediaCall, type ServerSentEvent, type SpeechAudio, type SpeechRequest, type Transcription, type TranscriptionRequest,
  type TranscriptionStreamEvent,
} from '@gw/provider-spec';
import type { UpstreamAnswer } from '../http/arrived-bytes-request';
import type { Deadline } from '../http/deadline';
import { OriginPools } from '../http/origin-pools';
import { headerValue, requestUpstream } from '../http/post-upstream';
import { releaseAnswer, releasingIterable } from '../http/releasing-iterable';
import { translateEventStream } from '../http/translate-event-stream';
import { callUpstream, openUpstreamStream } from '../http/upstream-call';
import { mapTransportError } from '../http/upstream-errors';
import { checkUpstreamShape, parseUpstreamJson, readAnswerText, readJsonAnswer } from '../http/upstream-json';
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

/**
 * OpenAI's images (`/images/generations`, `/images/edits`) and audio (`/audio/transcriptions`, `/audio/speech`) APIs,
 * on pooled connections like every other provider call: the target's timeout bounds the wait for the answer and
 * every gap within a streamed one, and a stream's events that arrived before a cut are still read.
 */
export class OpenAIMediaProvider implements MediaProvider {
  readonly kind = 'openai-compatible';
  readonly capabilities = OPENAI_MEDIA_CAPABILITIES;

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  images(req: ImageRequest, target: MediaTarget, signal?: AbortSignal): Promise<ImageResult> {
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.send(target, deadline, imageEndpoint(req), imageBody(req, target, false));
      const { data } = await readJsonAnswer(res, openAIImagesResponseSchema);
      return fromOpenAIImages(data, outputFormatOf(req), requestIdOf(res, `img-${data.created}`), target.providerModel);
    });
  }

  async imagesStream(req: ImageRequest, target: MediaTarget, signal?: AbortSignal): Promise<AsyncIterable<ImageStreamEvent>> {
    const { res, deadline } = await openUpstreamStream(target, signal, (deadline) =>
      this.send(target, deadline, imageEndpoint(req), imageBody(req, target, true), true));
    const providerResponseId = requestIdOf(res, `img-stream-${Date.now()}`);
    const state = { index: 0, outputFormat: outputFormatOf(req) };
    let usage = imageUsageOf(undefined, 0);
    const events = untilDone((data): ImageStreamEvent[] => {
      const raw = checkUpstreamShape(parseUpstreamJson(data, 'stream event'), openAIImageStreamEventSchema, 'stream event');
      const converted = fromOpenAIImageStreamEvent(raw, state);
      if (!converted) return [];
      if (converted.type === 'completed') usage = imageUsageOf(raw.usage, state.index);
      return [converted];
    });
    const end = (): ImageStreamEvent[] => [{ type: 'done', usage, servedModel: target.providerModel, providerResponseId }];
    return translateEventStream(res, deadline, events.translate, end, events.done);
  }

  transcribe(req: TranscriptionRequest, target: MediaTarget, signal?: AbortSignal): Promise<Transcription> {
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.send(target, deadline, '/audio/transcriptions', toOpenAITranscriptionForm(req, target.providerModel, false));
      const id = requestIdOf(res, `tr-${Date.now()}`);
      // text, srt and vtt answer the transcript itself, not JSON.
      if (!['json', 'verbose_json'].includes(req.responseFormat)) {
        return { text: await readAnswerText(res), usage: {}, servedModel: target.providerModel, providerResponseId: id };
      }
      const { data } = await readJsonAnswer(res, openAITranscriptionSchema);
      return fromOpenAITranscription(data, target.providerModel, id);
    });
  }

  async transcribeStream(req: TranscriptionRequest, target: MediaTarget, signal?: AbortSignal): Promise<AsyncIterable<TranscriptionStreamEvent>> {
    const { res, deadline } = await openUpstreamStream(target, signal, (deadline) =>
      this.send(target, deadline, '/audio/transcriptions', toOpenAITranscriptionForm(req, target.providerModel, true), true));
    const id = requestIdOf(res, `tr-${Date.now()}`);
    const events = untilDone((data): TranscriptionStreamEvent[] => {
      const e = checkUpstreamShape(parseUpstreamJson(data, 'stream event'), openAITranscriptStreamEventSchema, 'stream event');
      if (e.type === 'transcript.text.delta' && e.delta !== undefined) return [{ type: 'delta', delta: e.delta }];
      if (e.type === 'transcript.text.done') {
        return [{ type: 'done', transcription: { text: e.text ?? '', usage: transcriptionUsageOf(e.usage, undefined), servedModel: target.providerModel, providerResponseId: id } }];
      }
      return [];
    });
    return translateEventStream(res, deadline, events.translate, () => {}, events.done);
  }

  async speech(req: SpeechRequest, target: MediaTarget, signal?: AbortSignal): Promise<SpeechAudio> {
    const { res, deadline } = await openUpstreamStream(target, signal, (deadline) =>
      this.send(target, deadline, '/audio/speech', JSON.stringify(toOpenAISpeechBody(req, target.providerModel))));
    return audioOf(res, deadline, SPEECH_CONTENT_TYPES[req.responseFormat] ?? 'application/octet-stream');
  }

  async native(call: NativeMediaCall, target: MediaTarget, signal?: AbortSignal): Promise<NativeMediaAnswer> {
    const endpoint = call.kind === 'image' ? '/images/generations' : '/audio/speech';
    if (call.kind === 'speech') {
      const { res, deadline } = await openUpstreamStream(target, signal, (deadline) => this.send(target, deadline, endpoint, JSON.stringify(call.body)));
      const format = typeof call.body.response_format === 'string' ? call.body.response_format : 'mp3';
      return { type: 'audio', audio: audioOf(res, deadline, SPEECH_CONTENT_TYPES[format] ?? 'application/octet-stream') };
    }
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.send(target, deadline, endpoint, JSON.stringify(call.body));
      const body = parseUpstreamJson(await readAnswerText(res), 'response');
      return { type: 'json' as const, body, providerResponseId: requestIdOf(res, `img-${Date.now()}`) };
    });
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  /** POSTs a JSON body or a multipart form; a 2xx answer is returned, anything else thrown as OpenAI's error. */
  private send(target: MediaTarget, deadline: Deadline, endpoint: string, body: string | FormData, eventStream = false): Promise<UpstreamAnswer> {
    const headers = lowerCased(target.extraHeaders);
    // A form sets its own content type (with the boundary).
    if (typeof body === 'string') headers['content-type'] = 'application/json';
    if (eventStream) headers.accept = 'text/event-stream';
    if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
    return requestUpstream(this.pools, target, { method: 'POST', endpoint, headers, body, eventStream, deadline, mapError: mapOpenAIHttpError });
  }
}

/** An OpenAI media stream's events read by `translate`, up to its `data: [DONE]`; `done` says that marker went by. */
function untilDone<T>(translate: (data: string) => T[]): { translate: (event: ServerSentEvent) => T[]; done: () => boolean } {
  let done = false;
  return {
    translate: (event) => {
      if (event.data !== '[DONE]') return translate(event.data);
      done = true;
      return [];
    },
    done: () => done,
  };
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

function requestIdOf(res: { headers: IncomingHttpHeaders }, fallback: string): string {
  return headerValue(res.headers, 'x-request-id') ?? fallback;
}

function lowerCased(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * The audio body as it arrives, chunk by chunk. The target's timeout bounds each gap between chunks (the
 * request's body timeout); the connection is released however the reader stops, even before its first chunk.
 */
function audioOf(res: UpstreamAnswer, deadline: Deadline, fallbackType: string): SpeechAudio {
  deadline.stopTimer();
  const body = res.body;
  const release = () => releaseAnswer(body, deadline);
  return {
    contentType: headerValue(res.headers, 'content-type') ?? fallbackType,
    providerResponseId: requestIdOf(res, `speech-${Date.now()}`),
    chunks: releasingIterable((async function* () {
      try {
        for await (const chunk of body) yield chunk as Buffer;
      } catch (err) {
        throw mapTransportError(err, deadline);
      } finally {
        release();
      }
    })(), release),
  };
}
