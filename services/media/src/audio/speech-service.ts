import type { CallArchiver } from '@gw/call-archive';
import { InputError, type Identity } from '@gw/platform';
import { wavDurationSeconds, type SpeechAudio, type SpeechRequest } from '@gw/provider-spec';
import type { MediaBilledCalls, MediaPlan } from '../calls/media-billed-calls';
import type { MediaRoute, MediaRouter } from '../calls/media-routes';
import { forRoute, nativeRoutes, resolveAssets } from '../native/native-params';
import { checkFields, routesHonouring } from '../validation/request-fields';
import { MAX_SPEECH_INPUT_CHARS, SPEECH_BASE_FIELDS, SPEECH_FIELDS } from './audio-fields';

/** Speech runs at about fifteen characters a second at speed 1: the hold's bound (doubled) and the estimate for compressed formats. */
const CHARS_PER_SECOND = 15;
/** OpenAI's `pcm`: 24 kHz, 16-bit, mono. */
const PCM_BYTES_PER_SECOND = 48_000;

/** A started speech call: the audio as it arrives, and `finish` to bill it once the client has it (or left). */
export interface SpeechCall {
  requestId: string;
  contentType: string;
  chunks: AsyncIterable<Buffer>;
  /** `failed`: the audio broke off after its first byte (billed for what was sent, counted as a failed call). */
  finish(cancelled: boolean, failed?: boolean): void;
}

/**
 * Speech: the normalized body (voice from the model's `supported_voices`) or the supplier's native body, the
 * audio streamed back as the provider sends it, billed per second of audio once it has all been sent: measured
 * from the WAV header or PCM length, else estimated from the text.
 */
export class SpeechService {
  constructor(private readonly deps: { router: MediaRouter; calls: MediaBilledCalls; archive: CallArchiver }) {}

  async speak(identity: Identity, traceId: string, body: Record<string, unknown>): Promise<SpeechCall> {
    const { model, routes } = this.deps.router.model(body.model, 'speech');
    checkFields(body, SPEECH_FIELDS, model, SPEECH_BASE_FIELDS);
    if (typeof body.input !== 'string' || body.input.trim() === '') throw new InputError('input is required', 'input', 'missing_required_parameter');
    if (body.input.length > MAX_SPEECH_INPUT_CHARS) throw new InputError(`input is longer than ${MAX_SPEECH_INPUT_CHARS} characters`, 'input', 'invalid_value');
    const voices = model.supported_voices ?? [];
    const voice = body.voice ?? model.parameter_schema.voice?.default ?? voices[0];
    if (typeof voice !== 'string') throw new InputError('voice is required', 'voice', 'missing_required_parameter');
    if (!voices.includes(voice)) throw new InputError(`voice must be one of ${voices.join(', ')} for model '${model.id}'`, 'voice', 'invalid_value');
    const set = Object.keys(body).filter((f) => body[f] !== undefined && !SPEECH_BASE_FIELDS.includes(f as never));
    let serving = routesHonouring(routes.filter((r) => r.provider.speech), set, (r) => r.provider.capabilities.speech);
    const format = (body.response_format ?? model.parameter_schema.response_format?.default ?? serving[0].provider.capabilities.speechFormats[0]) as string;
    serving = routesHonouring(serving, [`response_format=${format}`], (r) => r.provider.capabilities.speechFormats.map((f) => `response_format=${f}`));
    const speed = typeof body.speed === 'number' ? body.speed : 1;
    const params = Object.fromEntries(Object.entries(body).filter(([f, v]) => v !== undefined && !['model', 'input', 'voice', 'response_format', 'speed'].includes(f)));
    const req: SpeechRequest = { input: body.input, voice, responseFormat: format, speed, params };
    return this.call(identity, traceId, model.id, { routes: serving, bounds: bounds(body.input, speed) }, format, body.input.length / speed, body,
      (route) => route.provider.speech!(req, route.target));
  }

  /** `Svc-Native-Params: true`: the supplier's body, model rewritten per route, asset references resolved. */
  async speakNative(identity: Identity, traceId: string, raw: unknown, resolveAsset: (ref: string, param: string) => Promise<string>): Promise<SpeechCall> {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new InputError('The native body must be a JSON object', null, 'invalid_request');
    const { model, routes } = this.deps.router.model((raw as Record<string, unknown>).model, 'speech');
    const serving = nativeRoutes(routes, 'speech');
    const body = await resolveAssets(raw as Record<string, unknown>, resolveAsset);
    const text = typeof body.input === 'string' ? body.input : JSON.stringify(body);
    const speed = typeof body.speed === 'number' && body.speed > 0 ? body.speed : 1;
    const format = typeof body.response_format === 'string' ? body.response_format : 'mp3';
    return this.call(identity, traceId, model.id, { routes: serving, bounds: bounds(text, speed) }, format, text.length / speed, raw, async (route) => {
      const answer = await route.provider.native!({ kind: 'speech', body: forRoute(body, route) }, route.target);
      if (answer.type !== 'audio') throw new InputError('The provider answered no audio', null, 'invalid_request');
      return answer.audio;
    });
  }

  private async call(identity: Identity, traceId: string, model: string, plan: MediaPlan, format: string, paceChars: number,
    request: unknown, open: (route: MediaRoute) => Promise<SpeechAudio>): Promise<SpeechCall> {
    const startedAtMs = Date.now();
    let bytes = 0;
    let head = Buffer.alloc(0);
    // Measured as the audio is passed on, so a stream this instance dies in is billed what was sent.
    const sent = () => ({ audio_duration_seconds: bytes === 0 ? 0 : spokenSeconds(format, head, bytes, paceChars) });
    const billed = await this.deps.calls.stream<SpeechAudio, Buffer>({
      apiType: 'speech', identity, traceId, model, plan, promptChars: paceChars, openingUsage: sent(),
      open: (route) => open(route),
      items: (audio) => audio.chunks,
      progress: (chunk, audio) => {
        bytes += chunk.length;
        if (head.length < 4096) head = Buffer.concat([head, chunk.subarray(0, 4096 - head.length)]);
        return { chars: 0, providerResponseId: audio.providerResponseId, servedModel: '', usage: sent() };
      },
      usageOf: (audio, route) => ({
        usage: { audio_duration_seconds: spokenSeconds(format, head, bytes, paceChars) },
        providerResponseId: audio.providerResponseId, servedModel: route.target.providerModel, finishReason: 'stop',
      }),
    });
    const finish = (cancelled: boolean, failed = false) => {
      billed.finish({ cancelled, failed });
      // The audio is described, never kept: its type, how many bytes were sent, and the seconds billed.
      this.deps.archive.record({
        requestId: billed.requestId, identity, apiType: 'speech', model, providerResponseId: billed.stream.providerResponseId, streamed: true, request,
        response: { content_type: billed.stream.contentType, bytes, audio_duration_seconds: spokenSeconds(format, head, bytes, paceChars), cancelled },
        startedAtMs, traceId,
      });
    };
    return { requestId: billed.requestId, contentType: billed.stream.contentType, chunks: billed.items, finish };
  }
}

function bounds(text: string, speed: number) {
  return { promptTokens: Math.ceil(Buffer.byteLength(text) / 3), outputTokens: 0, images: 0, audioSeconds: Math.ceil((2 * text.length) / CHARS_PER_SECOND / speed) + 1, videoSeconds: 0 };
}

/** Seconds of the audio sent: from a WAV header over the bytes sent, from PCM's fixed rate, else the text's pace. */
function spokenSeconds(format: string, head: Buffer, bytes: number, paceChars: number): number {
  if (head.toString('ascii', 0, 4) === 'RIFF') {
    const headerSeconds = wavDurationSeconds(head);
    const byteRate = head.length >= 32 ? head.readUInt32LE(28) : 0;
    // Streamed WAVs (espeak-ng) carry no final length: measure the bytes that were actually sent.
    if (byteRate > 0) return Math.round(((bytes - 44) / byteRate) * 1000) / 1000;
    if (headerSeconds !== null) return headerSeconds;
  }
  if (format === 'pcm') return Math.round((bytes / PCM_BYTES_PER_SECOND) * 1000) / 1000;
  return Math.round((paceChars / CHARS_PER_SECOND) * 1000) / 1000;
}
