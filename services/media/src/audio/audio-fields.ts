import type { FieldType } from '../validation/request-fields';

/** POST /v1/audio/transcriptions: every field of the spec's table, with its type. */
export const TRANSCRIPTION_FIELDS: Readonly<Record<string, FieldType>> = {
  model: 'string', file_url: 'string', mime_type: 'string', audio_data: 'data',
  language: 'string', prompt: 'string', response_format: 'string', audio_format: 'string', codec: 'string', hotwords: 'string',
  request_id: 'id', user_id: 'id', uid: 'id', temperature: 'number', segment_duration: 'number', timestamp_granularities: 'array',
  stream: 'boolean', enable_itn: 'boolean', enable_punc: 'boolean', enable_channel_split: 'boolean', enable_ddc: 'boolean',
  enable_speaker_info: 'boolean', show_utterances: 'boolean', enable_nonstream: 'boolean',
  corpus: 'object', metadata: 'object', extra_body: 'object', provider_options: 'object', rate: 'integer', bits: 'integer', channel: 'integer',
};

/** Where the audio comes from (exactly one), and its declared type: the gateway's own, not provider parameters. */
export const TRANSCRIPTION_SOURCE_FIELDS = ['model', 'file_url', 'mime_type', 'audio_data'] as const;

/** POST /v1/audio/speech, the normalized body. */
export const SPEECH_FIELDS: Readonly<Record<string, FieldType>> = {
  model: 'string', input: 'string', voice: 'string', response_format: 'string', speed: 'number', instructions: 'string',
};
export const SPEECH_BASE_FIELDS = ['model', 'input'] as const;

/** The longest text one speech call takes, in characters (OpenAI's bound). */
export const MAX_SPEECH_INPUT_CHARS = 4096;
