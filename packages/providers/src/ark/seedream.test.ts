import { InputError } from '@gw/platform';
import { isRetryableUpstreamError, type ImageRequest, type MediaTarget } from '@gw/provider-spec';
import { startSimulators, type RunningSimulator } from '../../../simulators/src';
import { createMediaProvider } from '../create-media-provider';
import { fromSeedreamImages, toSeedreamBody } from './convert-seedream-images';
import { RECORDED_SEEDREAM_GROUP, RECORDED_SEEDREAM_ONE } from './fixtures/recorded-seedream-shapes';
import { seedreamImagesSchema } from './seedream-api';
import type { SeedreamImageProvider } from './seedream-image-provider';

const req = (params: Record<string, unknown> = {}, extra: Partial<ImageRequest> = {}): ImageRequest => ({ prompt: 'a paper boat', n: 1, params, images: [], ...extra });

function refusal(run: () => unknown): string | null {
  try {
    run();
  } catch (err) {
    if (err instanceof InputError) return err.param;
    throw err;
  }
  throw new Error('expected an InputError');
}

describe('normalized image request -> Seedream body', () => {
  it.each([
    ['prompt only', req(), { model: 'seedream-4-0-250828', prompt: 'a paper boat' }],
    ['a group of images, no watermark', req({ sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 3 }, watermark: false }),
      { sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 3 }, watermark: false }],
    ['size, seed, format, prompt optimisation', req({ size: '2K', seed: 9, response_format: 'b64_json', optimize_prompt_options: { mode: 'fast' } }),
      { size: '2K', seed: 9, response_format: 'b64_json', optimize_prompt_options: { mode: 'fast' } }],
    ['one reference image by URL', req({}, { images: [{ url: 'https://example.com/a.png', mimeType: 'image/png', filename: 'a.png' }] }), { image: 'https://example.com/a.png' }],
    ['uploaded images as data URIs', req({}, { images: [{ bytes: Buffer.from('ab'), mimeType: 'image/png', filename: 'a.png' }, { url: 'https://example.com/b.png', mimeType: 'image/png', filename: 'b.png' }] }),
      { image: ['data:image/png;base64,YWI=', 'https://example.com/b.png'] }],
  ])('%s', (_name, request, expected) => {
    expect(toSeedreamBody(request, 'seedream-4-0-250828')).toMatchObject(expected);
  });

  it.each([
    ['n above 1', req({}, { n: 2 }), 'n'],
    ['a mask', req({}, { mask: { bytes: Buffer.from('m'), mimeType: 'image/png', filename: 'm.png' } }), 'mask'],
    ['quality', req({ quality: 'high' }), 'quality'],
    ['background', req({ background: 'transparent' }), 'background'],
  ])('refuses %s naming it', (_name, request, param) => {
    expect(refusal(() => toSeedreamBody(request, 'm'))).toBe(param);
  });
});

describe('recorded Seedream answers -> image result', () => {
  it('one image by URL, with its size and usage', () => {
    expect(fromSeedreamImages(seedreamImagesSchema.parse(RECORDED_SEEDREAM_ONE), 'ark-1', 'fallback')).toEqual({
      created: 1757321139, servedModel: 'seedream-4-0-250828', providerResponseId: 'ark-1',
      images: [{ url: RECORDED_SEEDREAM_ONE.data[0].url, outputFormat: 'jpeg', size: '3104x1312', error: null }],
      usage: { generated_images: 1, output_tokens: 16280, total_tokens: 16280 },
    });
  });

  it('a group whose second image was refused keeps that failure in its place', () => {
    const result = fromSeedreamImages(seedreamImagesSchema.parse(RECORDED_SEEDREAM_GROUP), 'ark-2', 'fallback');
    expect(result.images.map((i) => i.error?.code ?? 'ok')).toEqual(['ok', 'OutputImageSensitiveContentDetected', 'ok']);
    expect(result.images[0]).toMatchObject({ b64Json: RECORDED_SEEDREAM_GROUP.data[0].b64_json, outputFormat: 'jpeg' });
    expect(result.usage.generated_images).toBe(2);
  });
});

describe('Seedream images against the Ark simulator', () => {
  let sim: RunningSimulator;
  let provider: SeedreamImageProvider;
  let target: MediaTarget;
  beforeAll(async () => {
    sim = await startSimulators();
    provider = createMediaProvider('ark') as SeedreamImageProvider;
    target = { baseUrl: `${sim.url}/api/v3`, apiKey: 'sk-sim', providerModel: 'seedream-4-0-250828', timeoutMs: 5_000 };
  });
  afterAll(async () => {
    await provider.close();
    await sim.close();
  });

  it('one image by URL, fetchable without a key', async () => {
    const result = await provider.images(req({ size: '1K', watermark: true }), target);
    expect(result.images).toHaveLength(1);
    expect(result.images[0]).toMatchObject({ size: '1024x1024', error: null, url: expect.stringContaining('/sim-assets/images/') });
    expect((await fetch(result.images[0].url!)).headers.get('content-type')).toBe('image/png');
    expect(result.usage.generated_images).toBe(1);
  });

  it('a sequential group as base64, with a per-image failure', async () => {
    const result = await provider.images(req({ sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 3 }, response_format: 'b64_json' }, { prompt: 'sim-fail-second story' }), target);
    expect(result.images.map((i) => (i.error ? i.error.code : i.outputFormat))).toEqual(['png', 'OutputImageSensitiveContentDetected', 'png']);
    expect(result.usage.generated_images).toBe(2);
  });

  it('an upstream refusal is a 400 naming the provider param; a 429 is retryable', async () => {
    const bad = await provider.images(req({ size: '10x10' }), target).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, param: 'size' });
    const limited = await provider.images(req(), { ...target, providerModel: 'sim-error-429' }).catch((e: unknown) => e);
    expect(isRetryableUpstreamError(limited)).toBe(true);
  });

  it('a native body is sent as given under the provider model', async () => {
    const answer = await provider.native({ kind: 'image', body: { model: 'public/name', prompt: 'native', sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 2 } } }, target);
    expect(answer.type).toBe('json');
    expect(answer.type === 'json' && answer.body).toMatchObject({ model: 'seedream-4-0-250828', data: [{ url: expect.any(String) }, { url: expect.any(String) }] });
  });
});
