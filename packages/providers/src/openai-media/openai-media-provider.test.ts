import { isRetryableUpstreamError, wavDurationSeconds, wavOf, type MediaTarget } from '@gw/provider-spec';
import { startOpenAISimulator, type OpenAISimulator } from '../../../simulators/src';
import { PCM_RATE, tonePcm } from '../../../simulators/src/openai/media-samples';
import { OriginPools } from '../http/origin-pools';
import { OpenAIMediaProvider } from './openai-media-provider';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

describe('OpenAIMediaProvider against the OpenAI simulator', () => {
  let sim: OpenAISimulator;
  const provider = new OpenAIMediaProvider();
  const target = (providerModel = 'gpt-image-1', timeoutMs = 5_000): MediaTarget => ({ baseUrl: sim.baseUrl, apiKey: 'sim-key', providerModel, timeoutMs });
  const wav = wavOf(tonePcm(1.5), PCM_RATE);

  beforeAll(async () => {
    sim = await startOpenAISimulator({
      fixtures: {
        // A stream cut after its first partial image, as a dropped upstream connection.
        'image-drop': { body: `event: image_generation.partial_image\ndata: ${JSON.stringify({ type: 'image_generation.partial_image', b64_json: 'cGFydA==', partial_image_index: 0, output_format: 'png' })}\n\n`, dropConnection: true },
        // Streams that send their first bytes, then nothing more while the connection stays open.
        'image-stall': { body: `event: image_generation.partial_image\ndata: ${JSON.stringify({ type: 'image_generation.partial_image', b64_json: 'cGFydA==', partial_image_index: 0, output_format: 'png' })}\n\n`, endAfterMs: 60_000 },
        'transcript-stall': { body: `data: ${JSON.stringify({ type: 'transcript.text.delta', delta: 'Simu' })}\n\n`, endAfterMs: 60_000 },
        'speech-stall': { headers: { 'content-type': 'audio/wav' }, body: 'RIFF', endAfterMs: 60_000 },
      },
    });
  });
  afterAll(() => sim.close());

  it('generates inline images with usage, and reads per-image failures in place', async () => {
    const ok = await provider.images({ prompt: 'a fox', n: 2, params: { response_format: 'b64_json', size: '1024x1024' }, images: [] }, target());
    expect(ok.images).toHaveLength(2);
    expect(Buffer.from(ok.images[0].b64Json!, 'base64').subarray(0, 4)).toEqual(PNG);
    expect(ok.usage).toMatchObject({ generated_images: 2, input_tokens: expect.any(Number) });
    expect(ok.providerResponseId).toMatch(/^req_simmedia/);
    const partial = await provider.images({ prompt: 'a fox', n: 2, params: {}, images: [] }, target('sim-image-partial-failure'));
    expect(partial.images.map((i) => i.error?.code ?? null)).toEqual([null, 'content_policy_violation']);
    expect(partial.usage.generated_images).toBe(1);
  });

  it('edits with input images and a mask (multipart), and answers URLs when asked', async () => {
    const png = Buffer.from(ok64(), 'base64');
    const edit = await provider.images({
      prompt: 'add a hat', n: 1, params: { response_format: 'url' },
      images: [{ bytes: png, mimeType: 'image/png', filename: 'in.png' }], mask: { bytes: png, mimeType: 'image/png', filename: 'mask.png' },
    }, target());
    expect(edit.images[0].url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/__simulator\/images\//);
    expect(Buffer.from(await (await fetch(edit.images[0].url!)).arrayBuffer()).subarray(0, 4)).toEqual(PNG);
  });

  it('streams partial images before each final image, then the usage', async () => {
    const events = [];
    for await (const e of await provider.imagesStream({ prompt: 'streamed', n: 1, params: { partial_images: 2 }, images: [] }, target())) events.push(e.type);
    expect(events).toEqual(['partial', 'partial', 'completed', 'done']);
  });

  it('a stream cut mid-way yields what came, then fails with a typed error', async () => {
    const seen: string[] = [];
    const run = async () => {
      for await (const e of await provider.imagesStream({ prompt: 'x', n: 1, params: { partial_images: 1 }, images: [] }, target('sim-fixture-image-drop'))) seen.push(e.type);
    };
    await expect(run()).rejects.toMatchObject({ status: expect.any(Number) });
    expect(seen).toEqual(['partial']);
  });

  it.each([
    ['json', (t: { text: string }) => expect(t.text).toBe('Simulated transcription of 1.5 seconds of audio.')],
    ['verbose_json', (t: { segments?: unknown[]; duration?: number; usage: object }) => {
      expect(t.segments).toHaveLength(2);
      expect(t.duration).toBe(1.5);
      expect(t.usage).toEqual({ audio_duration_seconds: 2 });
    }],
    ['srt', (t: { text: string }) => expect(t.text).toMatch(/^1\n00:00:00,000 --> 00:00:01,500\n/)],
  ])('transcribes a WAV as %s', async (responseFormat, check) => {
    check(await provider.transcribe({ audio: { bytes: wav, filename: 'a.wav', mimeType: 'audio/wav' }, responseFormat, params: {} }, target('whisper-1')));
  });

  it('streams transcript deltas, then the whole text with its usage', async () => {
    const events = [];
    for await (const e of await provider.transcribeStream({ audio: { bytes: wav, filename: 'a.wav', mimeType: 'audio/wav' }, responseFormat: 'json', params: {} }, target('gpt-4o-mini-transcribe'))) events.push(e);
    expect(events.filter((e) => e.type === 'delta').length).toBeGreaterThan(3);
    expect(events.at(-1)).toMatchObject({ type: 'done', transcription: { text: 'Simulated transcription of 1.5 seconds of audio.', usage: { input_tokens: 15 } } });
  });

  it('streams speech audio chunk by chunk', async () => {
    const audio = await provider.speech({ input: 'x'.repeat(30), voice: 'nova', responseFormat: 'wav', speed: 1, params: {} }, target('gpt-4o-mini-tts'));
    expect(audio.contentType).toBe('audio/wav');
    const chunks: Buffer[] = [];
    for await (const c of audio.chunks) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(1);
    expect(wavDurationSeconds(Buffer.concat(chunks))).toBeCloseTo(2, 3);
  });

  it.each([
    ['sim-error-400', 400, false],
    ['sim-error-429', 429, true],
    ['sim-error-503', 502, true],
  ])('%s is a typed error (HTTP %i, retryable %s)', async (model, status, retryable) => {
    const err = await provider.images({ prompt: 'x', n: 1, params: {}, images: [] }, target(model)).catch((e: unknown) => e);
    expect(err).toMatchObject({ status });
    expect(isRetryableUpstreamError(err)).toBe(retryable);
  });

  it('a slow provider past the deadline is a retryable timeout', async () => {
    const slow = await startOpenAISimulator({ latencyMs: 2_000 });
    try {
      const err = await provider.images({ prompt: 'x', n: 1, params: {}, images: [] }, { ...target(), baseUrl: slow.baseUrl, timeoutMs: 200 }).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 504 });
      expect(isRetryableUpstreamError(err)).toBe(true);
    } finally {
      await slow.close();
    }
  });

  it('a reader that starts late on a cut stream still gets the events that arrived before the cut', async () => {
    const stream = await provider.imagesStream({ prompt: 'x', n: 1, params: { partial_images: 1 }, images: [] }, target('sim-fixture-image-drop'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const seen: string[] = [];
    const err = await (async () => {
      for await (const e of stream) seen.push(e.type);
    })().then(() => undefined, (e: unknown) => e);
    expect(seen).toEqual(['partial']);
    expect(isRetryableUpstreamError(err)).toBe(true);
  });

  it('speech audio left before its first chunk releases its upstream connection', async () => {
    const pools = new OriginPools();
    const own = new OpenAIMediaProvider(pools);
    try {
      const audio = await own.speech({ input: 'x', voice: 'nova', responseFormat: 'wav', speed: 1, params: {} }, target('sim-fixture-speech-stall'));
      const pool = pools.forOrigin(new URL(sim.baseUrl).origin);
      expect(pool.stats.running).toBe(1);
      await audio.chunks[Symbol.asyncIterator]().return?.();
      for (let i = 0; i < 20 && pool.stats.running > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(pool.stats.running).toBe(0);
    } finally {
      await own.close();
    }
  });

  describe('a provider that stalls after its first bytes fails as a retryable timeout once the target timeout passes without a byte', () => {
    it('an image stream', async () => {
      const seen: string[] = [];
      const err = await (async () => {
        for await (const e of await provider.imagesStream({ prompt: 'x', n: 1, params: { partial_images: 1 }, images: [] }, target('sim-fixture-image-stall', 300))) seen.push(e.type);
      })().then(() => undefined, (e: unknown) => e);
      expect(seen).toEqual(['partial']);
      expect(err).toMatchObject({ status: 504 });
      expect(isRetryableUpstreamError(err)).toBe(true);
    });
    it('a transcript stream', async () => {
      const seen: string[] = [];
      const err = await (async () => {
        for await (const e of await provider.transcribeStream({ audio: { bytes: wav, filename: 'a.wav', mimeType: 'audio/wav' }, responseFormat: 'json', params: {} }, target('sim-fixture-transcript-stall', 300))) seen.push(e.type);
      })().then(() => undefined, (e: unknown) => e);
      expect(seen).toEqual(['delta']);
      expect(err).toMatchObject({ status: 504 });
    });
    it('speech audio', async () => {
      const chunks: Buffer[] = [];
      const err = await (async () => {
        const audio = await provider.speech({ input: 'x', voice: 'nova', responseFormat: 'wav', speed: 1, params: {} }, target('sim-fixture-speech-stall', 300));
        for await (const c of audio.chunks) chunks.push(c);
      })().then(() => undefined, (e: unknown) => e);
      expect(Buffer.concat(chunks).toString()).toBe('RIFF');
      expect(err).toMatchObject({ status: 504 });
    });
  });

  it('passes a native body through and answers the provider JSON as it came', async () => {
    const answer = await provider.native({ kind: 'image', body: { model: 'gpt-image-1', prompt: 'native', n: 1, vendor_field: true } }, target());
    expect(answer).toMatchObject({ type: 'json', body: { data: [{ b64_json: expect.any(String) }] } });
  });
});

function ok64(): string {
  // A tiny valid PNG (1x1), as a client would upload.
  return 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
}
