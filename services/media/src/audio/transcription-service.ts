import type { CallArchiver } from '@gw/call-archive';
import { InputError, toGatewayError, type EventStreamWriter, type Identity } from '@gw/platform';
import type { AudioInput, Transcription, TranscriptionRequest, TranscriptionStreamEvent } from '@gw/provider-spec';
import type { MediaBilledCalls, MediaPlan } from '../calls/media-billed-calls';
import type { MediaRouter } from '../calls/media-routes';
import { checkFields, routesHonouring } from '../validation/request-fields';
import { TRANSCRIPTION_FIELDS, TRANSCRIPTION_SOURCE_FIELDS } from './audio-fields';
import { audioSeconds, worstCaseSeconds } from './audio-media';

interface PreparedTranscription {
  req: TranscriptionRequest;
  plan: MediaPlan;
  model: string;
  stream: boolean;
  /** Seconds of the input, when its container says (WAV): billed when the provider reports no duration. */
  inputSeconds: number | null;
  /** The request as the archive keeps it: the fields, and the audio described (never its bytes). */
  archived: Record<string, unknown>;
}

/** Tokens a transcription may use per second of audio, at most: its hold's bound for token-billed models. */
const TOKENS_PER_SECOND_BOUND = 50;
const NOT_SENT = new Set<string>([...TRANSCRIPTION_SOURCE_FIELDS, 'stream']);

/** The spec's Transcription result for JSON formats; text, srt and vtt answer the transcript itself. */
export type TranscriptionAnswer = { type: 'json'; body: Record<string, unknown> } | { type: 'text'; body: string };

/** Audio transcription: every field checked, routed to a wire format honouring all of them, billed per second of audio. */
export class TranscriptionService {
  constructor(private readonly deps: { router: MediaRouter; calls: MediaBilledCalls; archive: CallArchiver }) {}

  /** Checks the model and every field first, so a refused request never fetches its `file_url`; then reads the audio. */
  async prepare(body: Record<string, unknown>, readAudio: () => Promise<AudioInput>): Promise<PreparedTranscription> {
    const { model, routes } = this.deps.router.model(body.model, 'transcription');
    checkFields(body, TRANSCRIPTION_FIELDS, model, TRANSCRIPTION_SOURCE_FIELDS);
    const responseFormat = typeof body.response_format === 'string' ? body.response_format : 'json';
    const stream = body.stream === true;
    if (stream && responseFormat !== 'json' && responseFormat !== 'text') throw new InputError('A streamed transcription is json or text', 'response_format', 'invalid_value');
    const set = Object.keys(body).filter((f) => body[f] !== undefined && !NOT_SENT.has(f));
    if (stream) set.push('stream');
    const serving = routesHonouring(
      routesHonouring(routes.filter((r) => r.provider.transcribe), set, (r) => r.provider.capabilities.transcription),
      [`response_format=${responseFormat}`], (r) => r.provider.capabilities.transcriptionFormats.map((f) => `response_format=${f}`),
    );
    const params = Object.fromEntries(Object.entries(body).filter(([f, v]) => v !== undefined && !NOT_SENT.has(f) && f !== 'response_format'));
    const audio = await readAudio();
    const seconds = worstCaseSeconds(audio.bytes);
    return {
      req: { audio, responseFormat, params }, model: model.id, stream, inputSeconds: audioSeconds(audio.bytes), archived: archivedRequest(body, audio),
      plan: {
        routes: serving,
        bounds: { promptTokens: Math.ceil(seconds * TOKENS_PER_SECOND_BOUND), outputTokens: Math.ceil(seconds * TOKENS_PER_SECOND_BOUND), images: 0, audioSeconds: seconds, videoSeconds: 0 },
      },
    };
  }

  async transcribe(identity: Identity, traceId: string, p: PreparedTranscription): Promise<{ requestId: string; answer: TranscriptionAnswer }> {
    const startedAtMs = Date.now();
    const answer = await this.answer(identity, traceId, p);
    this.deps.archive.record({
      requestId: answer.requestId, identity, apiType: 'transcription', model: p.model, providerResponseId: answer.providerResponseId, streamed: false,
      request: p.archived, response: answer.answer.body, startedAtMs, traceId,
    });
    return { requestId: answer.requestId, answer: answer.answer };
  }

  private async answer(identity: Identity, traceId: string, p: PreparedTranscription): Promise<{ requestId: string; providerResponseId: string; answer: TranscriptionAnswer }> {
    const { requestId, result } = await this.deps.calls.call<Transcription>({
      apiType: 'transcription', identity, traceId, model: p.model, plan: p.plan,
      send: (route) => route.provider.transcribe!(p.req, route.target),
      usageOf: (t) => ({ usage: withSeconds(t, p.inputSeconds), providerResponseId: t.providerResponseId, servedModel: t.servedModel, finishReason: 'stop' }),
    });
    if (!['json', 'verbose_json'].includes(p.req.responseFormat)) return { requestId, providerResponseId: result.providerResponseId, answer: { type: 'text', body: result.text } };
    const usage = withSeconds(result, p.inputSeconds);
    return {
      requestId,
      providerResponseId: result.providerResponseId,
      answer: {
        type: 'json',
        body: p.req.responseFormat === 'verbose_json'
          ? {
            task: 'transcribe', language: result.language ?? null, duration: result.duration ?? usage.audio_duration_seconds ?? null, text: result.text,
            segments: result.segments ?? [], ...(result.words ? { words: result.words } : {}), ...(result.utterances ? { utterances: result.utterances } : {}),
            model: result.servedModel, usage,
          }
          : { text: result.text, model: result.servedModel, usage },
      },
    };
  }

  /** OpenAI's transcript stream events (`transcript.text.delta`, then `transcript.text.done` with the usage). */
  async stream(identity: Identity, traceId: string, p: PreparedTranscription, writer: (requestId: string) => EventStreamWriter): Promise<void> {
    // Set by the stream's callbacks: the assertion keeps TypeScript from narrowing it to null below.
    let done = null as Transcription | null;
    // The provider has all the audio once the request is sent: a stream cut anywhere is billed its seconds.
    const billable = () => (done ? withSeconds(done, p.inputSeconds) : (p.inputSeconds !== null ? { audio_duration_seconds: p.inputSeconds } : {}));
    const startedAtMs = Date.now();
    const billed = await this.deps.calls.stream<AsyncIterable<TranscriptionStreamEvent>, TranscriptionStreamEvent>({
      apiType: 'transcription', identity, traceId, model: p.model, plan: p.plan, promptChars: 0, openingUsage: billable(),
      open: (route) => route.provider.transcribeStream!(p.req, route.target),
      items: (s) => s,
      progress: (e) => {
        if (e.type === 'done') done = e.transcription;
        return { chars: 0, providerResponseId: done?.providerResponseId ?? '', servedModel: done?.servedModel ?? '', usage: billable() };
      },
      usageOf: () => ({
        usage: billable(),
        providerResponseId: done?.providerResponseId ?? '', servedModel: done?.servedModel ?? '', finishReason: done ? 'stop' : 'error',
      }),
    });
    const out = writer(billed.requestId);
    out.open();
    let failed = false;
    try {
      for await (const e of billed.items) {
        if (e.type === 'delta') out.event({ data: JSON.stringify({ type: 'transcript.text.delta', delta: e.delta }) });
        else out.event({ data: JSON.stringify({ type: 'transcript.text.done', text: e.transcription.text, usage: withSeconds(e.transcription, p.inputSeconds) }) });
      }
      out.end();
    } catch (err) {
      // After the first byte a failure is the stream's own error event; the audio sent is still billed.
      failed = true;
      out.fail(toGatewayError(err), traceId);
    } finally {
      billed.finish({ cancelled: out.clientGone, failed });
      this.deps.archive.record({
        requestId: billed.requestId, identity, apiType: 'transcription', model: p.model, providerResponseId: done?.providerResponseId ?? '', streamed: true,
        request: p.archived, response: done ? { text: done.text, usage: withSeconds(done, p.inputSeconds) } : null, startedAtMs, traceId,
      });
    }
  }
}

/** Billed per second of audio: the provider's count when it gave one, else the input's own length. */
function withSeconds(t: Transcription, inputSeconds: number | null) {
  const seconds = t.usage.audio_duration_seconds ?? t.duration ?? inputSeconds ?? undefined;
  return { ...t.usage, ...(seconds !== undefined ? { audio_duration_seconds: seconds } : {}) };
}

/**
 * The transcription request as archived: its fields, a `file_url` without its query (which may carry a signed
 * link's credential), and the audio itself as the archive describes bytes (type and size).
 */
function archivedRequest(body: Record<string, unknown>, audio: AudioInput): Record<string, unknown> {
  const { file_url: fileUrl, ...fields } = body;
  let url: string | undefined;
  if (typeof fileUrl === 'string') {
    try {
      const parsed = new URL(fileUrl);
      url = `${parsed.origin}${parsed.pathname}`;
    } catch {
      url = '[not a URL]';
    }
  }
  return { ...fields, ...(url !== undefined ? { file_url: url } : {}), file: { filename: audio.filename, mime_type: audio.mimeType, bytes: audio.bytes } };
}
