/** Media models of the e2e catalogue: the simulator's images and audio APIs, and espeak-ng speech on this machine. */

export const E2E_IMAGE_MODEL = 'e2e/image';
/** The simulator fails every second image of a request in place (`data[].error`). */
export const E2E_IMAGE_PARTIAL_FAILURE_MODEL = 'e2e/image-partial-failure';
/** First deployment answers 503, the second serves: the call falls back and is billed at the second's price. */
export const E2E_IMAGE_FALLBACK_MODEL = 'e2e/image-fallback';
/** The provider refuses every call (HTTP 400). */
export const E2E_IMAGE_REJECTED_MODEL = 'e2e/image-rejected';
export const E2E_TRANSCRIBE_MODEL = 'e2e/transcribe';
export const E2E_SPEECH_MODEL = 'e2e/speech';
export const E2E_ESPEAK_MODEL = 'e2e/espeak-speech';
/** Real offline recognition with pocketsphinx on this machine. */
export const E2E_POCKETSPHINX_MODEL = 'e2e/pocketsphinx';

/** USD per image and per second of audio: integer micros make expected charges exact. */
export const E2E_IMAGE_PRICE = { prompt_per_million: '0', completion_per_million: '0', per_image: '0.040000' };
export const E2E_AUDIO_PRICE = { prompt_per_million: '0', completion_per_million: '0', per_audio_second: '0.001000' };
export const E2E_SPEECH_VOICES = ['alloy', 'nova'];
export const E2E_ESPEAK_VOICES = ['en-us', 'en-gb'];

const spec = (type: string, options: unknown[] | null = null, min: number | null = null, max: number | null = null, extra: object = {}) =>
  ({ type, options, default: null, min, max, ...extra });

export const E2E_IMAGE_SCHEMA = {
  n: spec('integer', null, 1, 4),
  size: spec('string', ['auto', '1024x1024', '1536x1024']),
  quality: spec('string', ['auto', 'low', 'high']),
  background: spec('string', ['auto', 'transparent', 'opaque']),
  output_format: spec('string', ['png', 'jpeg', 'webp']),
  response_format: spec('string', ['url', 'b64_json']),
  stream: spec('boolean'),
  partial_images: spec('integer', null, 0, 3),
  images: spec('array', null, null, null, { max_items: 4 }),
  mask: spec('string'),
  input_fidelity: spec('string', ['low', 'high']),
  user: spec('string'),
  metadata: spec('object'),
  // A vendor field the OpenAI wire format cannot carry: accepted by the model's schema, refused by every route.
  seed: spec('integer', null, 0, 2_147_483_647),
};

const TRANSCRIBE_SCHEMA = {
  language: spec('string'),
  prompt: spec('string'),
  response_format: spec('string', ['json', 'text', 'srt', 'vtt', 'verbose_json']),
  temperature: spec('number', null, 0, 1),
  timestamp_granularities: spec('array', ['word', 'segment'], null, null, { max_items: 2 }),
  stream: spec('boolean'),
  // A vendor field the OpenAI wire format cannot carry.
  hotwords: spec('string'),
};

export function mediaModels() {
  const model = (id: string, media: string, input: string[], output: string[], schema: object, deployments: object[], voices: string[] | null = null) => ({
    id, name: id, owned_by: 'Gateway simulator', updated_at: '2026-11-20T00:00:00Z', media, supports_batch: false,
    architecture: { input_modalities: input, output_modalities: output, tokenizer: null },
    parameter_schema: schema, supported_voices: voices, deployments,
  });
  const sim = (id: string, providerModel: string, price: object) => ({ id, provider: 'simulator', provider_model: providerModel, price });
  return [
    model(E2E_IMAGE_MODEL, 'image', ['text', 'image'], ['image'], E2E_IMAGE_SCHEMA, [sim('e2e-image', 'gpt-image-1', E2E_IMAGE_PRICE)]),
    model(E2E_IMAGE_PARTIAL_FAILURE_MODEL, 'image', ['text'], ['image'], E2E_IMAGE_SCHEMA, [sim('e2e-image-partial', 'sim-image-partial-failure', E2E_IMAGE_PRICE)]),
    model(E2E_IMAGE_FALLBACK_MODEL, 'image', ['text'], ['image'], E2E_IMAGE_SCHEMA, [
      sim('e2e-image-failing', 'sim-error-503', { ...E2E_IMAGE_PRICE, per_image: '1.000000' }),
      sim('e2e-image-fallback', 'gpt-image-1', E2E_IMAGE_PRICE),
    ]),
    model(E2E_IMAGE_REJECTED_MODEL, 'image', ['text'], ['image'], E2E_IMAGE_SCHEMA, [sim('e2e-image-rejected', 'sim-error-400', E2E_IMAGE_PRICE)]),
    model(E2E_TRANSCRIBE_MODEL, 'transcription', ['audio'], ['text'], TRANSCRIBE_SCHEMA, [sim('e2e-transcribe', 'whisper-1', E2E_AUDIO_PRICE)]),
    model(E2E_SPEECH_MODEL, 'speech', ['text'], ['audio'], {
      voice: spec('string', E2E_SPEECH_VOICES), response_format: spec('string', ['mp3', 'wav', 'pcm']), speed: spec('number', null, 0.25, 4), instructions: spec('string'),
    }, [sim('e2e-speech', 'gpt-4o-mini-tts', E2E_AUDIO_PRICE)], E2E_SPEECH_VOICES),
    model(E2E_ESPEAK_MODEL, 'speech', ['text'], ['audio'], {
      voice: spec('string', E2E_ESPEAK_VOICES), response_format: spec('string', ['wav']), speed: spec('number', null, 0.5, 2),
    }, [{ id: 'e2e-espeak', provider: 'espeak-ng', provider_model: 'espeak-ng', price: E2E_AUDIO_PRICE }], E2E_ESPEAK_VOICES),
    model(E2E_POCKETSPHINX_MODEL, 'transcription', ['audio'], ['text'], {
      language: spec('string', ['en']), response_format: spec('string', ['json', 'text', 'verbose_json']),
    }, [{ id: 'e2e-pocketsphinx', provider: 'pocketsphinx', provider_model: 'pocketsphinx-en-us', price: E2E_AUDIO_PRICE }]),
  ];
}
