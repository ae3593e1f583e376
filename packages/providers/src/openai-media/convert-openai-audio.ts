import type { SpeechRequest, Transcription, TranscriptionRequest } from '@gw/provider-spec';
import { FormData } from 'undici';
import type { Usage } from '@gw/provider-spec';
import type { OpenAITranscription } from './openai-media-api';
import { openAITranscriptionUsageSchema } from './openai-media-api';
import type { z } from 'zod';

/** Transcription fields of the spec this wire format honours, sent under the same names. */
export const OPENAI_TRANSCRIPTION_FIELDS = ['language', 'prompt', 'response_format', 'temperature', 'timestamp_granularities', 'stream'] as const;
export const OPENAI_TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'vtt', 'verbose_json'] as const;
/** Speech fields beside `input`, `voice`, `response_format` and `speed`. */
export const OPENAI_SPEECH_FIELDS = ['voice', 'response_format', 'speed', 'instructions'] as const;
export const OPENAI_SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;

export const SPEECH_CONTENT_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg', opus: 'audio/ogg', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm',
};

/** The multipart form of `POST /audio/transcriptions`. */
export function toOpenAITranscriptionForm(req: TranscriptionRequest, providerModel: string, stream: boolean): FormData {
  const form = new FormData();
  form.set('model', providerModel);
  form.set('file', new Blob([new Uint8Array(req.audio.bytes)], { type: req.audio.mimeType }), req.audio.filename);
  form.set('response_format', req.responseFormat);
  for (const [name, value] of Object.entries(req.params)) {
    if (name === 'stream' || name === 'response_format') continue;
    if (name === 'timestamp_granularities' && Array.isArray(value)) for (const g of value) form.append('timestamp_granularities[]', String(g));
    else form.set(name, String(value));
  }
  if (stream) form.set('stream', 'true');
  return form;
}

export function transcriptionUsageOf(usage: z.infer<typeof openAITranscriptionUsageSchema> | undefined, duration: number | undefined): Usage {
  const out: Usage = {};
  if (usage?.type === 'tokens') {
    out.input_tokens = usage.input_tokens;
    out.output_tokens = usage.output_tokens;
    if (usage.total_tokens !== undefined) out.total_tokens = usage.total_tokens;
  }
  const seconds = usage?.type === 'duration' ? usage.seconds : duration;
  if (seconds !== undefined) out.audio_duration_seconds = seconds;
  return out;
}

export function fromOpenAITranscription(t: OpenAITranscription, servedModel: string, providerResponseId: string): Transcription {
  return {
    text: t.text,
    ...(t.language !== undefined ? { language: t.language } : {}),
    ...(t.duration !== undefined ? { duration: t.duration } : {}),
    ...(t.segments ? { segments: t.segments.map((s) => ({ id: s.id, start: s.start, end: s.end, text: s.text })) } : {}),
    ...(t.words ? { words: t.words.map((w) => ({ word: w.word, start: w.start, end: w.end })) } : {}),
    usage: transcriptionUsageOf(t.usage, t.duration),
    servedModel, providerResponseId,
  };
}

/** The JSON body of `POST /audio/speech`. */
export function toOpenAISpeechBody(req: SpeechRequest, providerModel: string): Record<string, unknown> {
  return { ...req.params, model: providerModel, input: req.input, voice: req.voice, response_format: req.responseFormat, speed: req.speed };
}
