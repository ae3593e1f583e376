import type { ImageRequest } from '@gw/provider-spec';
import { fromOpenAITranscription, toOpenAISpeechBody, toOpenAITranscriptionForm, transcriptionUsageOf } from './convert-openai-audio';
import { fromOpenAIImages, fromOpenAIImageStreamEvent, toOpenAIEditForm, toOpenAIGenerationBody } from './convert-openai-images';
import {
  dalleUrlGeneration, gptImageGeneration, imageStreamEvents, partialFailureGeneration, tokenTranscription, transcriptStreamEvents, whisperVerboseTranscription,
} from './fixtures/recorded-openai-media-shapes';
import { openAIImagesResponseSchema, openAIImageStreamEventSchema, openAITranscriptionSchema, openAITranscriptStreamEventSchema } from './openai-media-api';

const request = (over: Partial<ImageRequest> = {}): ImageRequest => ({ prompt: 'a cat', n: 2, params: {}, images: [], ...over });

describe('OpenAI images: recorded answers to the provider-free result', () => {
  it.each([
    ['gpt-image-1 inline image with token usage', gptImageGeneration, {
      images: [{ b64Json: 'iVBORw0KGgoAAAANSUhEUg==', outputFormat: 'png', size: '1024x1024', error: null }],
      usage: { generated_images: 1, input_tokens: 50, output_tokens: 4160, total_tokens: 4210, input_tokens_details: { text_tokens: 10, image_tokens: 40 } },
    }],
    ['dall-e url with revised prompt, no usage', dalleUrlGeneration, {
      images: [{ url: dalleUrlGeneration.data[0].url, revisedPrompt: 'A photograph of a white Siamese cat.', outputFormat: 'jpeg', error: null }],
      usage: { generated_images: 1 },
    }],
    ['a failed image in place and a request-level error', partialFailureGeneration, {
      images: [{ b64Json: 'iVBORw0KGgo=', outputFormat: 'jpeg', error: null }, { outputFormat: 'jpeg', error: { code: 'OutputImageSensitiveContentDetected', message: 'The generated image may contain sensitive content.' } }],
      usage: { generated_images: 1 },
      error: { code: 'PartialFailure', message: 'Some images could not be generated.' },
    }],
  ])('%s', (_name, recorded, expected) => {
    const parsed = openAIImagesResponseSchema.parse(recorded);
    expect(fromOpenAIImages(parsed, 'jpeg', 'req_1', 'gpt-image-1')).toEqual({ created: recorded.created, servedModel: 'gpt-image-1', providerResponseId: 'req_1', ...expected });
  });

  it('stream events: partials carry their index, each completed image advances the image index', () => {
    const state = { index: 0, outputFormat: 'png' };
    const events = imageStreamEvents.map((e) => fromOpenAIImageStreamEvent(openAIImageStreamEventSchema.parse(e), state));
    expect(events).toEqual([
      { type: 'partial', index: 0, partialIndex: 0, b64Json: 'cGFydGlhbDA=', outputFormat: 'png', size: '1024x1024' },
      { type: 'completed', index: 0, image: { b64Json: 'ZmluYWw=', outputFormat: 'png', size: '1024x1024', error: null } },
    ]);
    expect(state.index).toBe(1);
    expect(fromOpenAIImageStreamEvent({ type: 'keepalive' }, state)).toBeNull();
  });

  it.each([
    ['no parameters', request(), { model: 'gpt-image-1', prompt: 'a cat', n: 2 }],
    ['parameters under their own names', request({ params: { size: '1024x1024', quality: 'high', output_compression: 80, user: 'u1' } }),
      { model: 'gpt-image-1', prompt: 'a cat', n: 2, size: '1024x1024', quality: 'high', output_compression: 80, user: 'u1' }],
    ['stream flag and partial images', request({ params: { stream: true, partial_images: 2 } }), { model: 'gpt-image-1', prompt: 'a cat', n: 2, partial_images: 2, stream: true }],
  ])('generation body: %s', (_name, req, expected) => {
    expect(toOpenAIGenerationBody(req, 'gpt-image-1', req.params.stream === true)).toEqual(expected);
  });

  it('edit form: image[] per input, the mask, and the parameters as text', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
    const form = toOpenAIEditForm(request({
      n: 1, params: { input_fidelity: 'high' },
      images: [{ bytes: png, mimeType: 'image/png', filename: 'a.png' }, { bytes: png, mimeType: 'image/png', filename: 'b.png' }],
      mask: { bytes: png, mimeType: 'image/png', filename: 'mask.png' },
    }), 'gpt-image-1', false);
    expect(form.get('model')).toBe('gpt-image-1');
    expect(form.get('input_fidelity')).toBe('high');
    expect(form.getAll('image[]').map((f) => (f as File).name)).toEqual(['a.png', 'b.png']);
    expect(Buffer.from(await (form.get('mask') as File).arrayBuffer())).toEqual(png);
  });
});

describe('OpenAI audio: recorded answers to the provider-free transcription', () => {
  it.each([
    ['token-billed json', tokenTranscription, { text: tokenTranscription.text, usage: { input_tokens: 14, output_tokens: 45, total_tokens: 59 } }],
    ['whisper verbose_json with segments, words and seconds', whisperVerboseTranscription, {
      text: whisperVerboseTranscription.text, language: 'english', duration: 8.47,
      segments: [{ id: 0, start: 0, end: 3.32, text: ' The beach was a popular spot' }, { id: 1, start: 3.32, end: 8.47, text: ' on a hot summer day.' }],
      words: [{ word: 'The', start: 0, end: 0.24 }],
      usage: { audio_duration_seconds: 9 },
    }],
  ])('%s', (_name, recorded, expected) => {
    expect(fromOpenAITranscription(openAITranscriptionSchema.parse(recorded), 'whisper-1', 'req_2')).toEqual({ ...expected, servedModel: 'whisper-1', providerResponseId: 'req_2' });
  });

  it('stream events parse, and the done event carries the usage', () => {
    const parsed = transcriptStreamEvents.map((e) => openAITranscriptStreamEventSchema.parse(e));
    expect(parsed.map((e) => e.type)).toEqual(['transcript.text.delta', 'transcript.text.delta', 'transcript.text.done']);
    expect(transcriptionUsageOf(parsed[2].usage, undefined)).toEqual({ input_tokens: 14, output_tokens: 7, total_tokens: 21 });
    // Without a count of seconds from the provider, the duration it reported is billed.
    expect(transcriptionUsageOf(undefined, 3.5)).toEqual({ audio_duration_seconds: 3.5 });
  });

  it('transcription form: the file, the format, repeated granularities, other fields as text', () => {
    const form = toOpenAITranscriptionForm({
      audio: { bytes: Buffer.from('RIFF'), filename: 'a.wav', mimeType: 'audio/wav' }, responseFormat: 'verbose_json',
      params: { language: 'en', temperature: 0.2, timestamp_granularities: ['word', 'segment'] },
    }, 'whisper-1', false);
    expect([form.get('model'), form.get('response_format'), form.get('language'), form.get('temperature')]).toEqual(['whisper-1', 'verbose_json', 'en', '0.2']);
    expect(form.getAll('timestamp_granularities[]')).toEqual(['word', 'segment']);
    expect((form.get('file') as File).name).toBe('a.wav');
  });

  it('speech body: normalized fields and extra ones under their names', () => {
    expect(toOpenAISpeechBody({ input: 'hi', voice: 'nova', responseFormat: 'wav', speed: 1.25, params: { instructions: 'calm' } }, 'gpt-4o-mini-tts'))
      .toEqual({ model: 'gpt-4o-mini-tts', input: 'hi', voice: 'nova', response_format: 'wav', speed: 1.25, instructions: 'calm' });
  });
});
